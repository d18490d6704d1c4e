"""The app under uvicorn in a thread, on a free loopback port: for tests and bench/review.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI


@contextmanager
def running(app: FastAPI, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve `app` on `host` at a port the OS picks; yields the base URL; stops the server on exit."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="review-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the review server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
