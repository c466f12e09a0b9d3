"""Where the third-party suites are (fabtests, IMB: not ours, never
copied into the project): ET_THIRD_PARTY, else shared/third-party beside
the checkout (a worktree one folder deeper looks one folder higher too).
None when absent: the tests that need them skip with one line."""
import os


def third_party(src_root, suite):
    roots = [os.environ.get("ET_THIRD_PARTY", "")]
    for up in ("..", os.path.join("..", "..")):
        roots.append(os.path.join(src_root, up, "shared", "third-party"))
    for r in roots:
        if r and os.path.isdir(os.path.join(r, suite)):
            return os.path.normpath(os.path.join(r, suite))
    return None
