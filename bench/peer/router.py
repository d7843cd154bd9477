"""LiteLLM's Router as the side-by-side peer of Switchback (see README.md beside this file).

    python router.py retry --base-url URL --requests N --concurrency C
    python router.py reset --base-url URL [--wait-s S]

Each run prints ONE JSON object, on one line, on stdout at the end. Everything else (LiteLLM's
own logging and prints included) goes to stderr: file descriptor 1 is pointed at stderr for the
whole run and the answer is written to a saved copy of the original stdout.
"""

import os

import quiet

quiet.offline()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

API_KEY = "sk-bench"


ANSWER = quiet.claim_stdout()

_import_started = time.perf_counter()
import litellm  # noqa: E402
from litellm import Router  # noqa: E402

IMPORT_S = round(time.perf_counter() - _import_started, 3)

quiet.silence(litellm)
litellm.drop_params = False

try:
    from importlib.metadata import version as _dist_version

    LITELLM_VERSION = _dist_version("litellm")
except Exception:  # pragma: no cover - the pinned wheel always has metadata
    LITELLM_VERSION = getattr(litellm, "__version__", "unknown")


def answer(obj: dict) -> None:
    ANSWER.write(json.dumps(obj, separators=(",", ":")) + "\n")
    ANSWER.flush()


def usage() -> tuple[float, float]:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0  # Linux: ru_maxrss in KiB


async def consume(stream) -> str:
    """Read a Router stream to its end; the content it carried."""
    parts = []
    async for chunk in stream:
        choices = getattr(chunk, "choices", None) or []
        for choice in choices:
            delta = getattr(choice, "delta", None)
            text = getattr(delta, "content", None) if delta is not None else None
            if text:
                parts.append(text)
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# retry: two groups of one deployment each, num_retries=2, primary -> secondary fallback.


def retry_router(base_url: str) -> Router:
    api_base = base_url.rstrip("/") + "/v1"
    return Router(
        model_list=[
            {
                "model_name": "primary",
                "litellm_params": {"model": "openai/bench-a", "api_base": api_base, "api_key": API_KEY},
            },
            {
                "model_name": "secondary",
                "litellm_params": {"model": "openai/bench-b", "api_base": api_base, "api_key": API_KEY},
            },
        ],
        num_retries=2,
        fallbacks=[{"primary": ["secondary"]}],
    )


async def run_retry(base_url: str, requests: int, concurrency: int) -> dict:
    router = retry_router(base_url)
    gate = asyncio.Semaphore(concurrency)
    ok = failed = 0
    errors: dict[str, int] = {}

    async def one(i: int) -> None:
        nonlocal ok, failed
        async with gate:
            try:
                stream = await router.acompletion(
                    model="primary",
                    messages=[{"role": "user", "content": f"task-{i}"}],
                    stream=True,
                )
                text = await consume(stream)
            except Exception as error:  # a request that ends in an error counts as failed
                failed += 1
                name = type(error).__name__
                errors[name] = errors.get(name, 0) + 1
                if errors[name] == 1:
                    print(f"task-{i}: {name}: {str(error)[:300]}", file=sys.stderr)
                return
            if text:
                ok += 1
            else:
                failed += 1
                errors["empty_stream"] = errors.get("empty_stream", 0) + 1

    # CPU time of the run only, as Switchback's is counted (not the import).
    cpu_before, _ = usage()
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(requests)))
    wall = time.perf_counter() - started
    cpu_after, rss = usage()
    cpu = cpu_after - cpu_before
    return {
        "requests": requests,
        "ok": ok,
        "failed": failed,
        "wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "peak_rss_mb": round(rss, 1),
        "litellm": LITELLM_VERSION,
        "errors": errors,
        "import_s": IMPORT_S,
    }


# ---------------------------------------------------------------------------------------------
# reset: an Anthropic deployment throttled until a reset ~2 s ahead, with a fallback group.


def reset_router(base_url: str) -> Router:
    # LiteLLM's anthropic chat path appends "/v1/messages" to api_base unless it already ends so
    # (litellm/main.py, ensure_api_route(api_base, "v1/messages")), so the bare base URL posts to
    # URL/v1/messages.
    api_base = base_url.rstrip("/")
    return Router(
        model_list=[
            {
                "model_name": "claude",
                "litellm_params": {"model": "anthropic/claude-bench", "api_base": api_base, "api_key": API_KEY},
            },
            {
                "model_name": "claude-b",
                "litellm_params": {"model": "anthropic/claude-bench-b", "api_base": api_base, "api_key": API_KEY},
            },
        ],
        num_retries=2,
        fallbacks=[{"claude": ["claude-b"]}],
    )


async def run_reset(base_url: str, wait_s: float) -> dict:
    router = reset_router(base_url)
    started = time.perf_counter()
    error = None
    ok = False
    try:
        async with asyncio.timeout(wait_s):
            stream = await router.acompletion(
                model="claude",
                messages=[{"role": "user", "content": "reset"}],
                max_tokens=64,
                stream=True,
            )
            text = await consume(stream)
        ok = bool(text)
        if not ok:
            error = "empty stream"
    except TimeoutError:
        error = f"deadline: no answer within --wait-s {wait_s} s"
    except Exception as exc:
        error = f"{type(exc).__name__}: {str(exc)[:500]}"
    wall = time.perf_counter() - started
    return {"ok": ok, "error": error, "wall_s": round(wall, 4), "litellm": LITELLM_VERSION, "import_s": IMPORT_S}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="scenario", required=True)
    retry = sub.add_parser("retry", help="N streamed requests through primary (2 retries) -> secondary")
    retry.add_argument("--base-url", required=True, help="the mock's base, e.g. http://127.0.0.1:8080")
    retry.add_argument("--requests", type=int, required=True)
    retry.add_argument("--concurrency", type=int, required=True)
    reset = sub.add_parser("reset", help="one streamed Anthropic request against a limit that resets")
    reset.add_argument("--base-url", required=True)
    reset.add_argument(
        "--wait-s",
        type=float,
        default=60.0,
        help="deadline for the whole request in seconds (default 60); past it the answer is ok=false",
    )
    args = parser.parse_args()
    if args.scenario == "retry":
        result = asyncio.run(run_retry(args.base_url, args.requests, args.concurrency))
    else:
        result = asyncio.run(run_reset(args.base_url, args.wait_s))
    answer(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
