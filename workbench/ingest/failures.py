"""How a write step that fails after its documents were committed says so: :class:`StepFailed`,
with the cause in words (:func:`describe_os_error`) and how to finish the step."""

from __future__ import annotations

__all__ = ["StepFailed", "describe_os_error"]


def describe_os_error(exc: BaseException) -> str:
    """An error of the operating system as its cause in words, e.g. "the disk is full (ENOSPC)".

    >>> import errno
    >>> describe_os_error(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full (ENOSPC: No space left on device)'
    """
    import errno

    code = getattr(exc, "errno", None)
    name = errno.errorcode.get(code, "") if isinstance(code, int) else ""
    strerror = getattr(exc, "strerror", None)
    detail = f"{name}: {strerror}" if name and strerror else (str(exc) or type(exc).__name__)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk is full ({detail})"
    if code == errno.EIO:
        return f"an I/O error of the disk ({detail})"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"the folder cannot be written ({detail})"
    return f"{type(exc).__name__}: {detail}"


class StepFailed(RuntimeError):
    """A write step failed after its documents were committed (out of memory, disk full, an
    error of the operating system): every document written is kept, the workspace stays marked
    (:data:`VECTORS_IN_FLIGHT`), and the next ingest, remove or repair finishes the step."""
