"""Wrapped and continued lines are read as the one logical line they are; separate records never are."""

from __future__ import annotations

import textwrap

from faultline.engine import Engine
from faultline.model import Verdict
from faultline.scan.continuation import TERMINAL_WIDTHS, logical_line, stands_alone, wrap_widths

OOM = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total "
       "capacity of 79.14 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 78.1 GiB "
       "memory in use.")


def _bounds(buf: bytes, needle: bytes) -> tuple[int, int]:
    start = buf.index(needle)
    start = buf.rfind(b"\n", 0, start) + 1
    end = buf.find(b"\n", start)
    return start, end if end != -1 else len(buf)


def test_a_line_wrapped_at_a_fixed_width_is_read_whole(engine: Engine) -> None:
    width = 80
    pieces = [OOM[i:i + width] for i in range(0, len(OOM), width)]
    text = "step 1 loss 2.0\n" + "\n".join(pieces) + "\nstep 2 loss 1.9\n"
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None
    assert diagnosis.root_cause.signature_id == "cuda-oom"
    assert diagnosis.root_cause.line == 2  # the logical line keeps its first physical line's number
    assert diagnosis.root_cause.rank == 2


def test_a_keyword_cut_in_two_by_the_wrap_is_found() -> None:
    buf = b"x" * 70 + b" CUDA out of mem\nory. Tried to allocate 2.00 GiB\n"
    start, end = _bounds(buf, b"CUDA")
    first, last, joined = logical_line(buf, start, end, len(buf))
    assert joined is not None and b"CUDA out of memory. Tried" in joined
    assert (first, last) == (0, len(buf) - 1)


def test_a_wrap_that_fell_on_the_space_before_a_bracket_is_joined() -> None:
    """A line of a terminal's width, then " (world_size=4, ...)": the wrap fell on the space before the bracket."""
    head = (b"RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
            b"store_based_barrier_key:1")
    assert len(head) == 120
    buf = head + b"\n (world_size=4, worker_count=16, timeout=0:30:00)\nnext record\n"
    start, end = _bounds(buf, b"RuntimeError")
    joined = logical_line(buf, start, end, len(buf))[2]
    assert joined is not None and joined.endswith(b"store_based_barrier_key:1 (world_size=4, worker_count=16, "
                                                  b"timeout=0:30:00)")


def test_a_number_then_a_capitalised_word_is_two_records() -> None:
    """A progress line of no terminal's width ending in a number, then a message: no word was cut there."""
    progress = b"Epoch: [0]  [ 0/65]  eta: 0:01:55  lr: 0.000125  loss: 2.9749 (2.9749)  " + b"x" * 60 + b" mem: 5038"
    buf = progress + b"\nLoss is nan, stopping training\n"
    start, end = _bounds(buf, b"Loss is")
    assert logical_line(buf, start, end, len(buf))[2] is None


def test_after_the_one_widest_line_a_capitalised_word_is_a_record_and_a_lowercase_rest_a_piece() -> None:
    """The longest line of a short paste is no evidence of a viewer's width: after a long command line, horovodrun's
    "Process 1 exit ..." (horovod/runner/gloo_run.py) is a record of its own; a word's lowercase rest still joins."""
    command = b"HOROVOD_GLOO_RENDEZVOUS_ADDR=10.42.153.137 " * 6 + b"horovodrun -np 3 python train_elastic.py"
    buf = command + b"\nProcess 1 exit with status code 137.\nINFO:root:record state: worker-1[0] = FAILURE\n"
    wrap = wrap_widths(buf)
    start, end = _bounds(buf, b"Process 1")
    assert logical_line(buf, start, end, len(buf), wrap)[2] is None
    cut = b"[1,0]<stderr>:W stall_inspector.cc:105] One or more tensors were submitted " + b"x" * 140 + b" for remaind"
    buf = cut + b"\ner of ranks for more than 60 seconds.\n[1,0]<stderr>:Stalled ranks:\n"
    start, end = _bounds(buf, b"er of ranks")
    joined = logical_line(buf, start, end, len(buf), wrap_widths(buf))[2]
    assert joined is not None and b"remainder of ranks" in joined


def test_the_kernels_indented_continuation_joins_its_stamped_first_line(engine: Engine) -> None:
    # NVIDIA open-gpu-kernel-modules prints the Xid 79 message as three kernel lines; dmesg indents the
    # continuation to where the first line's text began.
    text = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.\n"
            "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    buf = text.encode()
    start, end = _bounds(buf, b"fallen off")
    assert not stands_alone(buf, start, end, len(buf))
    diagnosis = engine.diagnose_text(text, "dmesg.txt")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "xid-fallen-off-bus"
    assert diagnosis.root_cause.line == 1


def test_repeated_records_of_one_width_are_not_joined() -> None:
    line = b"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 8.165126103939127e-202"
    buf = b"\n".join([line] * 5) + b"\n"
    start, end = _bounds(buf[len(line) + 1:], b"Gradient")
    start += len(line) + 1
    end += len(line) + 1
    assert logical_line(buf, start, end, len(buf))[2] is None


def test_records_that_differ_only_in_their_counter_are_not_joined(engine: Engine) -> None:
    """A training loop's progress lines share a width and start alike but for the step's number: each is a record
    of its own, so the first one whose loss reads NaN is the line named."""
    text = ("=> STEP  748   lr: 0.000598   giou_loss: 2.10   conf_loss: 6.18   prob_loss: 0.03   total_loss: 8.31\n"
            "=> STEP  749   lr: 0.000599   giou_loss: 2.54   conf_loss: 6.51   prob_loss: 0.02   total_loss: 9.07\n"
            "=> STEP  750   lr: 0.000600   giou_loss:  nan   conf_loss: 10.8   prob_loss: 0.06   total_loss:  nan\n")
    assert len({len(line) for line in text.splitlines()}) == 1
    diagnosis = engine.diagnose_text(text, "train.log")
    assert diagnosis.root_cause is not None
    assert (diagnosis.root_cause.signature_id, diagnosis.root_cause.line) == ("nan-loss", 3)


def test_a_traceback_frame_is_not_joined_with_interleaved_output() -> None:
    buf = (b' File "/home/user/src/transformers/integrations.py", line 413, in init_deepspeed_engine_for_training\n'
           b"Fail to create cublas handle.\n")
    start, end = _bounds(buf, b"Fail to")
    assert logical_line(buf, start, end, len(buf))[2] is None


def test_prefixed_records_stand_alone() -> None:
    buf = (b"[rank0]: " + b"a" * 100 + b"\n[rank1]: " + b"b" * 100 + b"\n")
    start, end = _bounds(buf, b"[rank1]")
    assert stands_alone(buf, start, end, len(buf))
    assert logical_line(buf, start, end, len(buf))[2] is None


_SOCKET = ("(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after "
           "1800s while trying to connect to (172.17.0.2, 44737).")
_WATCHDOG = ("(ActorModelRayActor pid=207260, ip=10.0.1.75) [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught "
             "collective operation timeout: WorkNCCL(SeqNum=3856, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
             "Timeout(ms)=1800000) ran for 1800268 milliseconds before timing out.")
_LOADING = "(CriticModelRayActor pid=489162) Loading extension module cpu_adam... [repeated 3x across cluster] " * 2


def _wrapped(lines: list[str], width: int) -> str:
    return "\n".join(piece for line in lines for piece in (line[i:i + width] for i in range(0, len(line), width)))


def test_a_paste_wrapped_at_a_width_of_its_own_is_read_whole(engine: Engine) -> None:
    """149 columns is no usual terminal's width, but the paste's longest lines all have it: its wrap width."""
    text = _wrapped([_SOCKET, _LOADING, _WATCHDOG], 149) + "\n"
    assert wrap_widths(text.encode()).widths == TERMINAL_WIDTHS | {149}
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None
    assert diagnosis.root_cause.signature_id == "store-connect-failed" and diagnosis.root_cause.line == 1
    assert any(e.signature_id == "nccl-watchdog-timeout" for e in diagnosis.events)


def test_a_width_of_its_own_needs_several_different_lines_of_it() -> None:
    """One long line, or the same record repeated, is no wrap: its length says nothing about a viewer."""
    assert wrap_widths((_SOCKET + "\nstep 1\n").encode()).widths == TERMINAL_WIDTHS
    assert wrap_widths(((_SOCKET + "\n") * 5).encode()).widths == TERMINAL_WIDTHS
    assert wrap_widths(("x" * 500 + "\n" + "y" * 500 + "\n" + "z" * 500 + "\n").encode()).widths == TERMINAL_WIDTHS


def test_a_wrap_before_a_digit_or_a_parenthesis_is_joined() -> None:
    shm = (b"g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
           b"/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)")
    cut = shm.index(b"(size")
    buf = shm[:cut].ljust(120, b" ")[:120] + b"\n" + shm[cut:] + b"\n"  # a viewer 120 columns wide
    start, end = 0, buf.index(b"\n")
    assert not stands_alone(buf, start, end, len(buf))
    assert logical_line(buf, start, end, len(buf))[2] is not None
    address = b"[E108 20:04:34.467642512 socket.cpp:957] [c10d] The client socket has timed out after 900s while try"
    buf = (address + b"ing to connect to (3").ljust(120, b"x")[:120] + b"\n3.145.124.128, 29500).\n"
    assert not stands_alone(buf, 0, 120, len(buf))


def test_a_prefix_in_parentheses_after_a_full_line_is_a_record_of_its_own() -> None:
    line = b"(WorkerDict pid=15039) [rank-6]: Saving extra_state to /workspace/ckpt/global_step_50/actor/state.pt"
    buf = line.ljust(120, b" ") + b"\n(raylet) [2025-03-01 16:18:15,116 E 2687 2687] node_manager.cc:3069: x\n"
    assert logical_line(buf, 0, 120, len(buf))[2] is None


def test_a_wrap_before_an_index_bracket_is_joined_and_a_bracket_prefix_is_not() -> None:
    """After a line of a terminal's width, '[1], listen on ...' is the rest of the line (the bracket closes into a
    comma: text), '[rank3]: ...' and '[E1129 ...] ...' are records of their own."""
    line = (b"[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket]"
            b"[Listen] socket type[1], listen on ip[192.168.20.160] and specific port[16666] fail.")
    cut = line.index(b"[1], listen")
    assert cut <= 120
    buf = line[:cut].ljust(120, b" ")[:120] + b"\n" + line[cut:] + b"\n"
    assert not stands_alone(buf, 0, 120, len(buf))
    assert logical_line(buf, 0, 120, len(buf))[2] is not None
    for record in (b"[rank3]: ValueError: x", b"[E1129 18:02:21.1 ProcessGroupNCCL.cpp:616] x", b"[1,0]<stderr>: x"):
        other = line[:cut].ljust(120, b" ")[:120] + b"\n" + record + b"\n"
        assert logical_line(other, 0, 120, len(other))[2] is None


def test_a_line_longer_than_the_width_before_it_is_no_piece_of_a_wrap() -> None:
    """A line that has a terminal's width by chance, then a longer line: no wrap makes a piece longer than its width,
    so the two are records of their own. Text of multi-byte characters may be longer in bytes and is still joined."""
    first = (b"AssertionError: assert param.ds_status == ZeroParamStatus.AVAILABLE").ljust(120, b"x")
    longer = b": {'id': 853, 'status': 'NOT_AVAILABLE', 'numel': 0, " + b"y" * 100
    buf = first + b"\n" + longer + b"\n"
    assert logical_line(buf, 0, 120, len(buf))[2] is None
    wide = ": 进度 ".encode() + "字".encode() * 60  # 60 columns of CJK, 180 bytes
    buf = first + b"\n" + wide + b"\n"
    assert logical_line(buf, 0, 120, len(buf))[2] is not None


def test_grpc_error_details_continue_the_error_above_them() -> None:
    """TensorFlow and XLA print gRPC's status details on the line after 'Additional GRPC error information from remote
    target ...:': a JSON object starting with its "created" time, part of the error whatever the lines' widths."""
    head = b"2024-01-31 10:21:35.025511: W external/tsl/tsl/distributed_runtime/preemption_sync_manager.cc:170] Failed"
    details = (b':{"created":"@1706696495.008693800","description":"Error received from peer ipv4:10.150.0.4:62464",'
               b'"file":"external/com_github_grpc_grpc/src/core/lib/surface/call.cc","file_line":1056}')
    buf = head + b"\n" + details + b"\n"
    start, end = _bounds(buf, b':{"created"')
    first, _last, joined = logical_line(buf, start, end, len(buf))
    assert first == 0 and joined is not None and joined.startswith(head) and joined.endswith(details)


# torch/csrc/distributed/c10d/socket.cpp (legacy backend): the listen failure and the bind failures it lists.
_BIND = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
         "failed to bind to [::]:29600 (errno: 98 - Address already in use). The server socket has failed to bind to "
         "0.0.0.0:29600 (errno: 98 - Address already in use).")


def test_a_word_wrapped_message_is_read_whole_with_its_spaces(engine: Engine) -> None:
    """Wrapped between words at 80 columns (``fmt``, ``fold -s``, an editor's hard wrap): each piece ends before the
    width because its next word did not fit; the wrap drops the space, and the joined line puts it back."""
    pieces = textwrap.wrap(_BIND, 80)
    assert [len(p) for p in pieces[:-1]] == [73, 80, 78]  # one piece fills the width: its break is a space too
    assert pieces[-1].startswith("98 - ")  # a piece may start with a number
    text = "step 1 loss 2.0\n" + "\n".join(pieces) + "\nstep 2 loss 1.9\n"
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None
    assert diagnosis.root_cause.signature_id == "store-addr-in-use"
    assert diagnosis.root_cause.line == 2
    assert diagnosis.root_cause.text == _BIND  # every space where a wrap fell, none where it did not


def test_short_lines_that_are_records_of_their_own_are_not_word_wrapped() -> None:
    """A line shorter than a width, then one whose first word would not have fitted on it, is still two records
    when either says so: a sentence's or a rule's end, an indented or a frame line, a capitalised word, a host."""
    pairs = [
        (b"Ran out of memory trying to allocate 33.84MiB.  See logs for memory state.",
         b"resource exhausted: OOM when allocating tensor with shape[128,32,32,192]"),
        (b"-" * 74, b"mpirun has detected an attempt to run as root."),
        (b"Failed to add the host to the list of known hosts (/root/.ssh/known_hosts).",
         b"Permission denied, please try again."),
        (b"    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
         b"torch.multiprocessing.spawn.ProcessRaisedException:"),
        (b'File "/megatron/initialize.py", line 181, in _initialize_distributed',
         b"torch.distributed.init_process_group("),
        (b"Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes",
         b"Starting RPC server on 0.0.0.0:50052, backend memory: 7686 MB"),
        (b"2edaa9ce4458:21609:21718 [0] NCCL INFO transport.cc:33 -> 2 [Async thread]",
         b"2edaa9ce4458:21609:21718 [0] NCCL INFO transport.cc:113 -> 2"),
        (b"10-0-4-10:74872:74954 [0] NCCL INFO transport/net_ib.cc:528 -> 2 (Async)",
         b"10-0-4-10:74872:74954 [0] NCCL INFO include/net.h:22 -> 2"),
    ]
    for first, second in pairs:
        assert 56 <= len(first) < 80
        buf = first + b"\n" + second + b"\n"
        cut = len(first) + 1
        assert logical_line(buf, cut, len(buf) - 1, len(buf))[2] is None, (first, second)
        assert logical_line(buf, 0, len(first), len(buf))[2] is None, (first, second)
