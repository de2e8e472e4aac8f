"""Read the client's messages on the event loop itself, from stdin as an asyncio pipe.

pygls's stdio reader hands every header line and every body to a thread-pool worker
(``run_in_executor(stdin.readline)``), so one request crosses between threads about six times before its
handler runs. While a diagnosis runs in a worker thread, each crossing waits for the GIL (up to the switch
interval, longer behind a long C call): ~6 ms a request, and tens at the worst. Here the event loop reads
the pipe itself when it polls (the transport pygls uses for TCP: ``asyncio.StreamReader``), and the same
message loop (``pygls.io_.run_async``) parses and dispatches. A stdin that is not a pipe, socket or
terminal (a regular file) falls back to pygls's reader.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from threading import Event
from typing import Any, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.server import JsonRPCServer

logger = logging.getLogger(__name__)
# The message loop logs as it does under pygls's own start_io, where logging_setup.py filters its records.
_MESSAGE_LOOP_LOGGER = logging.getLogger("pygls.server")

# The longest header line accepted, and how much the reader buffers before it stops reading the pipe (a
# body is read whole whatever its size).
READ_LIMIT = 1024 * 1024
# The pipe buffer asked for: Linux's limit for an unprivileged process (/proc/sys/fs/pipe-max-size).
PIPE_BYTES = 1024 * 1024


async def pipe_reader(stdin: BinaryIO) -> asyncio.StreamReader | None:
    """``stdin`` read by the running loop; None when it cannot be (a regular file, a closed stream), and on
    Windows, whose event loop reads only pipes opened for overlapped I/O: an inherited stdin is not, and the
    failure would come later, from inside the transport. Windows keeps pygls's reader."""
    if sys.platform == "win32":
        return None
    widen_pipe(stdin)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), stdin)
    except (ValueError, OSError) as error:
        logger.info("stdin cannot be read as a pipe (%s): reading it in threads", error)
        return None
    return reader


def widen_pipe(stdin: BinaryIO) -> None:
    """Ask for a 1 MiB pipe buffer instead of 64 KiB. A large log's didOpen (the whole text as JSON: 29 MB
    for 200,000 lines) then crosses the pipe in ~30 wakeups of the client and of this process rather than
    ~450, and reaches the diagnosis ~17 ms sooner. Linux only (``F_SETPIPE_SZ``); a refusal (a lower
    system limit, not a pipe) leaves the pipe as it is."""
    try:
        import fcntl

        set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
        if set_size is not None:
            fcntl.fcntl(stdin.fileno(), set_size, PIPE_BYTES)
    except (ImportError, OSError, ValueError) as error:
        logger.debug("the input pipe keeps its size: %s", error)


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's handler of errors raised in callbacks, less the one a closed pipe causes by design: the
    client closes it while a request still runs (``initialize`` loading the library), ``asyncio.run`` then
    cancels that request's task, and pygls's done-callback re-raises the ``CancelledError`` (a traceback on
    stderr for an ordinary end). Every other error goes to asyncio's default handler as before."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        logger.debug("a request cancelled at shutdown: %s", context.get("message"))
        return
    loop.default_exception_handler(context)


def _running_requests() -> list[str]:
    """The names of the handlers still running on this loop (``initialize``), other than this task."""
    current = asyncio.current_task()
    names = {getattr(task.get_coro(), "__name__", "") for task in asyncio.all_tasks() if task is not current}
    return sorted(name for name in names if name in _REQUESTS_WORTH_NAMING)


_REQUESTS_WORTH_NAMING = {"initialize", "shutdown"}


def start_io(server: JsonRPCServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve ``server`` on ``stdin``/``stdout`` until the client says ``exit`` or closes the pipe (what
    ``LanguageServer.start_io`` does, with the pipe read on the loop). A closed pipe ends the server with
    code 0 and one log line, whatever it was doing."""
    stop = server._stop_event = Event()
    server.protocol.set_writer(StdoutWriter(stdout))

    async def serve() -> None:
        asyncio.get_running_loop().set_exception_handler(_quiet_cancellation)
        reader = await pipe_reader(stdin) or StdinAsyncReader(stdin, server.thread_pool)
        try:
            await run_async(stop_event=stop, reader=reader, protocol=server.protocol, logger=_MESSAGE_LOOP_LOGGER,
                            error_handler=server.report_server_error)
        except asyncio.IncompleteReadError:
            logger.error("the client closed the connection in the middle of a message")
        except ValueError as error:  # StreamReader.readline: a "header" line longer than READ_LIMIT
            logger.error("the client sent a header line longer than %d bytes (%s): not a language server client; "
                         "shutting down", READ_LIMIT, error)
        else:
            if not stop.is_set():
                running = _running_requests()
                logger.info("the client closed the connection%s; shutting down",
                            f" during {', '.join(running)}" if running else "")

    try:
        asyncio.run(serve())
    except BrokenPipeError:
        logger.error("the connection to the client is lost: shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
