#!/usr/bin/env python3
"""`mpirun -np N subgraph run MODEL --stages N`: one pipeline stage per rank.

Usage: mpi_run_test.py PROGRAM PLUGIN_DIR

Runs the program under Open MPI's mpirun over loopback TCP and checks:
  * zoo ResNet-50 in two stages on two ranks gives the one-process outputs
    bit for bit, and a small CNN in three stages on three ranks does too;
  * a rank whose model cannot be read ends every rank: rank 0 prints one
    line naming rank 1 and its stage, within 10 s;
  * a rank killed mid-run ends the job within 10 s, with a line naming a
    rank: the survivor's (mpirun ends it) or mpirun's about the dead one;
  * a rank that falls silent (emudev's delay) is named by rank 0's watchdog
    after --mpi-timeout;
  * ranks and stages that disagree are a usage error.
Exit status 0, 1 on a failed check, 77 (skipped) where mpirun is missing
or the program was built without MPI.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROGRAM, PLUGIN_DIR = sys.argv[1], sys.argv[2]
MPIRUN = shutil.which("mpirun")
# Loopback TCP only (no shared-memory or network transports to probe), as
# root where CI runs as root, and more ranks than cores where CI has two.
MPI_ARGS = ["--oversubscribe", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo",
            "--mca", "oob_tcp_if_include", "lo"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           SUBGRAPH_PLUGIN_PATH=PLUGIN_DIR, OMPI_MCA_rmaps_base_oversubscribe="1")
# For a sanitizer build (ignored by others): Open MPI keeps allocations
# past MPI_Finalize. Its components stay loaded and stacks are unwound in
# full, so that tools/lsan-mpi.supp can tell its leaks from subgraph's.
ENV["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                             "fast_unwind_on_malloc=0"]))
ENV["LSAN_OPTIONS"] = "suppressions=" + os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "lsan-mpi.supp")
ENV["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"

CNN = """graph @cnn(%x: f32[N, 4, 8, 8]) {
  %w1 = const f32[8, 4, 3, 3] splat(0.05)
  %w2 = const f32[8, 8, 3, 3] splat(0.03)
  %w3 = const f32[8, 8, 3, 3] splat(0.02)
  %a = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @c1
  %b = Relu(%a) @r1
  %c = Conv(%b, %w2) {pads = [1, 1, 1, 1]} @c2
  %d = Relu(%c) @r2
  %e = Conv(%d, %w3) {pads = [1, 1, 1, 1]} @c3
  %y = Relu(%e) @r3
  return %y
}
"""

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def mpirun(parts, timeout=120):
    """mpirun over `parts`: one (ranks, argv) per MPMD part."""
    command = [MPIRUN] + MPI_ARGS
    for i, (n, argv) in enumerate(parts):
        command += ([":"] if i else []) + ["-np", str(n)] + argv
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=timeout)
    return done, time.monotonic() - start


def our_errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith("subgraph: error:")]


def same_outputs(work, model, shape, ranks, micro_batches, extra=()):
    one = os.path.join(work, f"one{ranks}")
    many = os.path.join(work, f"many{ranks}")
    common = ["--backend", "NONE", "--shape", shape, "--random-inputs", "3", "--threads", "1"]
    subprocess.run([PROGRAM, "run", model, *common, "--output-dir", one, "-q"], check=True,
                   env=ENV, capture_output=True)
    done, _ = mpirun([(ranks, [PROGRAM, "run", model, *common, "--stages", str(ranks),
                               "--micro-batches", str(micro_batches), "--output-dir", many,
                               "--runs", "2", *extra])])
    check(done.returncode == 0, f"{ranks} ranks run {os.path.basename(model)}: "
          f"{done.stderr.strip()[-400:]}")
    summary = re.search(rf"{micro_batches} micro-batches over {ranks} ranks, 2 runs: median",
                        done.stdout)
    check(summary is not None, f"rank 0 reports the run: {done.stdout[-300:]}")
    names = sorted(f for f in os.listdir(one) if f.endswith(".npy"))
    check(names and all(os.path.exists(os.path.join(many, n)) and
                        open(os.path.join(one, n), "rb").read() ==
                        open(os.path.join(many, n), "rb").read() for n in names),
          f"{ranks} ranks give the one-process outputs bit for bit ({names})")


def bad_model_on_one_rank(work, model):
    bad = os.path.join(work, "bad.sg")
    with open(bad, "w") as f:
        f.write("graph broken {\n  this is not a graph\n")
    common = ["--stages", "2", "--backend", "NONE", "--shape", "input=1,3,224,224",
              "--random-inputs", "1", "--mpi-timeout", "20"]
    done, took = mpirun([(1, [PROGRAM, "run", model, *common]),
                         (1, [PROGRAM, "run", bad, *common])], timeout=60)
    lines = our_errors(done.stderr)
    check(done.returncode != 0 and took < 10, f"a bad model on rank 1 ends the job ({took:.1f} s)")
    check(len(lines) == 1 and lines[0].startswith("subgraph: error: rank 1 (stage 1 on dev:1): "
                                                  f"{bad}:1:"),
          f"one line names rank 1 and its stage: {lines}")


def killed_rank(work, model):
    pids = os.path.join(work, "pids")
    os.mkdir(pids)
    wrapper = (f"echo $$ > {pids}/rank$OMPI_COMM_WORLD_RANK; exec {PROGRAM} run {model} "
               "--stages 2 --backend NONE --shape input=2,3,224,224 --random-inputs 1 "
               "--micro-batches 2 --threads 1 --runs 100000 --mpi-timeout 30")
    command = [MPIRUN] + MPI_ARGS + ["-np", "2", "sh", "-c", wrapper]
    out_path = os.path.join(work, "killed.out")
    with open(out_path, "w") as out:
        job = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True, env=ENV)
    # Rank 0 prints the stages once every rank is set up, then runs.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "stages: 2" not in open(out_path).read():
        time.sleep(0.1)
    time.sleep(1)  # well into the runs
    with open(f"{pids}/rank1") as f:
        os.kill(int(f.read()), signal.SIGKILL)
    killed = time.monotonic()
    try:
        _, stderr = job.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        job.kill()
        _, stderr = job.communicate()
    stderr = stderr or ""
    took = time.monotonic() - killed
    lines = our_errors(stderr)
    check(job.returncode != 0 and took < 10, f"killing rank 1 ends the job in {took:.1f} s")
    # The survivor's own line, or (when mpirun stops forwarding its output
    # first, which happens) mpirun's, naming the rank that died.
    ours = any(re.match(r"subgraph: error: rank 0 \(stage 0 on dev:0\): ", l) for l in lines)
    theirs = re.search(r"process rank 1 with PID \d+ on node \S+ exited on signal 9", stderr)
    check(ours or theirs, f"an error line names a rank: {lines or stderr}")


def silent_rank(model):
    common = ["--stages", "2", "--backend", "emudev", "--shape", "input=1,3,224,224",
              "--random-inputs", "1", "--threads", "1", "--mpi-timeout", "1"]
    done, took = mpirun([(1, [PROGRAM, "run", model, *common]),
                         (1, [PROGRAM, "run", model, *common, "--plugin-option",
                              "emudev.delay_us=3000000"])], timeout=60)
    lines = our_errors(done.stderr)
    check(done.returncode != 0 and took < 10, f"a silent rank ends the job ({took:.1f} s)")
    check(any("rank 0 (stage 0 on dev:0): nothing from rank 1 (stage 1 on dev:1) for 1 s" in l
              for l in lines), f"rank 0's watchdog names rank 1: {lines}")


def usage(model):
    done, _ = mpirun([(2, [PROGRAM, "run", model, "--stages", "3", "--backend", "NONE",
                           "--random-inputs", "1", "--shape", "x=1,4,8,8"])], timeout=60)
    lines = our_errors(done.stderr)
    check(done.returncode != 0 and lines and
          "mpirun started 2 ranks for 3 stages: one stage per rank" in lines[0],
          f"2 ranks for 3 stages is refused: {lines}")


def main():
    if not MPIRUN:
        print("skipped: mpirun is not installed (tools/setup.sh installs openmpi-bin)")
        return 77
    version = subprocess.run([PROGRAM, "run", "--help"], capture_output=True, text=True)  # lists --mpi-timeout only with MPI
    if "--mpi-timeout" not in version.stdout:
        print("skipped: the program was built without MPI (libopenmpi-dev)")
        return 77
    with tempfile.TemporaryDirectory() as work:
        resnet = os.path.join(work, "resnet50.sg")
        subprocess.run([PROGRAM, "zoo", "resnet50", "--batch", "0", "-o", resnet, "-q"],
                       check=True)
        cnn = os.path.join(work, "cnn.sg")
        with open(cnn, "w") as f:
            f.write(CNN)
        same_outputs(work, resnet, "input=2,3,224,224", 2, 2)
        same_outputs(work, cnn, "x=6,4,8,8", 3, 3)
        bad_model_on_one_rank(work, resnet)
        killed_rank(work, resnet)
        silent_rank(resnet)
        usage(cnn)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
