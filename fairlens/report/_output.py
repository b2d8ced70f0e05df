"""Where a report is written: checked (really, by creating the file) before any analysis runs."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .._base import validated

__all__ = ["check_output_path", "REPORT_SUFFIXES"]

#: file formats a report can be written in, by extension
REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".json": "json"}


@validated({
    "path": "no_validation", "name": [str], "suffixes": "no_validation", "default_name": [str],
})
def check_output_path(path, name="out", *, suffixes=None, default_name="report.html") -> Path:
    """Validate, before any work is done, that a report can be written to ``path``.

    The folder must exist (it is never created), ``path`` must not be a folder, no part of it
    may be an existing file, an existing ``path`` must be a regular file (never a device such as
    ``/dev/full`` or a file under ``/proc``), and the file must really be creatable: a new file
    is created and removed again, an existing one is opened for appending (not changed).

    Parameters
    ----------
    path : str or os.PathLike
        Where the report will be written.
    name : str
        The argument's name in error messages (``"--out"`` on the command line).
    suffixes : collection of str, optional
        Accepted extensions (lower case, with the dot), e.g. ``{".html", ".htm"}``; ``None``
        accepts any.
    default_name : str
        The file name suggested when ``path`` is a folder.

    Returns
    -------
    pathlib.Path
        ``path``, with ``~`` expanded.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path.
    ValueError
        With a one-line message naming ``name``, the path and the fix.

    Examples
    --------
    >>> import tempfile, os
    >>> from fairlens.report._output import check_output_path
    >>> folder = tempfile.mkdtemp()
    >>> check_output_path(os.path.join(folder, "r.html"), suffixes={".html"}).name
    'r.html'
    >>> check_output_path("r.txt", suffixes={".html"})
    Traceback (most recent call last):
    ...
    ValueError: out: 'r.txt' has the extension '.txt'; a report is written as .html
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise TypeError(f"{name} must be a file path (str or os.PathLike); got {path!r}")
    path = Path(path).expanduser()
    if path.is_dir():
        raise ValueError(f"{name}: {str(path)!r} is a directory; give a file name, e.g. "
                         f"{str(path / default_name)!r}")
    if suffixes is not None and path.suffix.lower() not in suffixes:
        allowed = ", ".join(sorted(suffixes, key=lambda s: (s != '.html', s)))
        raise ValueError(f"{name}: {str(path)!r} has the extension {path.suffix or '(none)'!r}; "
                         f"a report is written as {allowed}")
    parent = path.parent
    ancestor = parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise ValueError(f"{name}: {str(path)!r} is under {str(ancestor)!r}, which is a file, "
                         "not a folder")
    if not parent.is_dir():
        raise ValueError(f"{name}: the folder {str(parent)!r} does not exist; create it "
                         "first or choose another path")
    if path.exists() or path.is_symlink():
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise ValueError(f"{name}: {str(path)!r} cannot be written ({exc.strerror})") \
                from None
        if not stat.S_ISREG(mode):
            raise ValueError(f"{name}: {str(path)!r} is not a regular file (a device, pipe or "
                             "socket); choose a file path")
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            raise ValueError(f"{name}: {str(path)!r} cannot be written "
                             f"({exc.strerror or exc})") from None
        return path
    try:  # create it for real: permissions, read-only or pseudo file systems (/proc), quotas
        with open(path, "xb") as fh:
            fh.write(b"fairlens")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise ValueError(f"{name}: {str(path)!r} cannot be written ({exc.strerror or exc})") \
            from None
    finally:
        try:
            if path.is_file():
                path.unlink()
        except OSError:
            pass
    return path


def _umask():
    """The process's umask (read without changing it where the platform allows)."""
    try:  # Linux >= 4.7 reports it in /proc without the set-and-restore race
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@validated({
    "path": "no_validation", "text": [str],
})
def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, so a
    failed write never leaves a truncated report; the file gets the permissions the umask gives a
    new file (0644 under the usual umask 022).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (its folder must exist).
    text : str
        The content.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OSError
        If the file cannot be written (the temporary file is removed).

    Examples
    --------
    >>> import os, tempfile
    >>> from fairlens.report import write_text_atomic
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_text_atomic(os.path.join(tmp, "r.html"), "<p>ok</p>").name
    'r.html'
    """
    import tempfile

    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            # mkstemp makes the file private (0600); a report gets what any new file gets under the
            # user's umask (CI artifacts, shared folders), as open(path, "w") would give it
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
