"""Where the third-party suites are (fabtests, IMB: not ours, never
copied into the project): ET_THIRD_PARTY, else shared/third-party beside
the checkout (a worktree one folder deeper looks one folder higher too).
None when absent: the tests that need them skip with one line."""
import os
import shutil


def third_party(src_root, suite):
    roots = [os.environ.get("ET_THIRD_PARTY", "")]
    for up in ("..", os.path.join("..", "..")):
        roots.append(os.path.join(src_root, up, "shared", "third-party"))
    for r in roots:
        if r and os.path.isdir(os.path.join(r, suite)):
            return os.path.normpath(os.path.join(r, suite))
    return None


def suite_or_skip(src_root, suite, tools, why_tools):
    """The suite's folder, or None after the one line a skipped test says
    (no suite; or no tools, which why_tools names)."""
    path = third_party(src_root, suite)
    if path is None:
        print(f"SKIP: no {suite} in ../shared/third-party (a checkout outside this project)")
        return None
    if not all(shutil.which(t) for t in tools):
        print(f"SKIP: {why_tools}")
        return None
    return path
