"""Where the third-party suites are (fabtests, IMB: not ours, never
copied into the project): ET_THIRD_PARTY, else shared/third-party beside
the checkout (a worktree one folder deeper looks one folder higher too).
None when absent: the tests that need them skip with one line."""
import os
import shutil
import subprocess


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


def build_imb(suite, build_root, mpi="openmpi"):
    """IMB-MPI1 built with MPI's compilers (openmpi: mpicc, the default
    one; mpich: mpicc.mpich) into BUILD_ROOT/tests/imb (imb-mpich), once;
    its Makefile wants -Werror and MSVC's _alloca: gcc 12 needs both
    undone.  The program's path, or None after saying why."""
    name, cc, cxx = (("imb", "mpicc", "mpicxx -DOMPI_SKIP_MPICXX") if mpi == "openmpi"
                     else ("imb-" + mpi, "mpicc." + mpi, "mpicxx." + mpi))
    dest = os.path.join(build_root, "tests", name)
    exe = os.path.join(dest, "IMB-MPI1")
    if os.path.exists(exe):
        return exe
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(suite, dest)
    with open(os.path.join(build_root, "tests", name + "-build.log"), "w") as log:
        r = subprocess.run(["make", f"CC={cc} -Wno-error -D_alloca=alloca -include alloca.h",
                            f"CXX={cxx} -Wno-error", "IMB-MPI1"],
                           cwd=dest, stdout=log, stderr=subprocess.STDOUT)
    if r.returncode or not os.path.exists(exe):
        print(f"FAIL: IMB-MPI1 did not build with {cc} (see {log.name})")
        return None
    return exe
