"""The cost of LiteLLM's own exception mapping on the error bodies Switchback's catalogue classifies.

    python classify.py [--fixtures DIR] [--runs 7] [--min-run-s 0.5]

Prints ONE JSON object, on one line, on stdout at the end (everything else goes to stderr).

What is timed is ``litellm.litellm_core_utils.exception_mapping_utils.exception_type``: the function
every chat call's failure goes through (``litellm/main.py``, the ``except`` of ``acompletion``:
``raise exception_type(model=..., custom_llm_provider=..., original_exception=e,
completion_kwargs=..., extra_kwargs=kwargs)``; and ``streaming_handler.py`` for errors inside a
stream). It turns the provider's own exception (``OpenAIError`` from the OpenAI SDK path,
``AnthropicError``, ``BedrockError``, ``VertexAIError``, a provider config's ``get_error_class``
result on the ``base_llm_http_handler`` path, ...) into LiteLLM's OpenAI-style classes
(``RateLimitError``, ``ContextWindowExceededError``, ...), which the Router's retry, cooldown and
fallback rules then read.

Its inputs are not built by hand. Phase 1 (capture) replays each fixture with an HTTP status from
a loopback server inside this process (status, headers and body as the fixture has them) and
sends one streamed ``litellm.acompletion`` at it through the provider's real code path (provider
prefix, ``api_base`` pointed at the replay, ``max_retries=0`` as the Router sets). A wrapper
around ``exception_type`` records the arguments of the first call whose ``original_exception``
is still the provider's own exception: exactly what the mapping receives in real use. Phase 2
(timing) calls the real ``exception_type`` with those recorded arguments, whole passes over the
set, repeated until a run lasts ``--min-run-s``; the median and minimum of ``--runs`` runs.

A fixture whose provider LiteLLM cannot reach on loopback without real credentials (``vertex``:
Vertex AI needs a Google token before it sends anything) gets the exception its handler raises on
an HTTP error instead: ``VertexAIError(status_code=..., message=<body>, headers=...)``
(``llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py``, the same class the Gemini path
raises), mapped with ``custom_llm_provider="vertex_ai"``. A fixture for which LiteLLM raised
nothing (a 200 body it does not read as an error) is counted in ``not_raised`` and not timed.
"""

import os

import quiet

quiet.offline()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import binascii  # noqa: E402
import collections  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


ANSWER = quiet.claim_stdout()

from aiohttp import web  # noqa: E402  (a LiteLLM dependency)

import litellm  # noqa: E402
import litellm.main as litellm_main  # noqa: E402
from litellm.litellm_core_utils import exception_mapping_utils, streaming_handler  # noqa: E402

quiet.silence(litellm)

from importlib.metadata import version as _dist_version  # noqa: E402

LITELLM_VERSION = _dist_version("litellm")
REAL_EXCEPTION_TYPE = exception_mapping_utils.exception_type
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "fixtures", "providers"))
KEY = "sk-bench"

# Fixture provider -> (LiteLLM model string, extra litellm params, api_base suffix). The model
# prefix is LiteLLM's custom_llm_provider; the extra params are what that provider needs to send.
_BEDROCK = {
    "aws_access_key_id": "AKIDBENCHBENCHBENCH0",
    "aws_secret_access_key": "bench-secret",
    "aws_region_name": "us-east-1",
}
PROVIDERS = {
    "openai": ("openai/gpt-4o-mini", {}, "/v1"),
    # An OpenAI-compatible server behind LiteLLM's openai/ route with a custom base.
    "openai_compatible": ("openai/local-model", {}, "/v1"),
    "llama.cpp": ("openai/local-model", {}, "/v1"),
    "simulated": ("openai/local-model", {}, "/v1"),
    # LiteLLM's own providers for these servers.
    "vllm": ("hosted_vllm/local-model", {}, "/v1"),
    "lmstudio": ("lm_studio/local-model", {}, "/v1"),
    "azure_openai": ("azure/bench-deployment", {"api_version": "2024-10-21"}, ""),
    "anthropic": ("anthropic/claude-sonnet-4-5", {}, ""),
    # Claude Code talks to Anthropic's Messages API; LiteLLM has no claude_code provider.
    "claude_code": ("anthropic/claude-sonnet-4-5", {}, ""),
    # Codex talks to OpenAI's Responses API (the ChatGPT backend); LiteLLM's chatgpt provider needs
    # an OAuth login, so its errors go through the openai provider's Responses route here.
    "codex": ("openai/gpt-4.1-mini", {}, "/v1"),
    "gemini": ("gemini/gemini-2.5-flash", {}, "/v1beta"),
    # Gemini CLI talks to Google's Code Assist API with Gemini's error shapes; no LiteLLM provider.
    "gemini_cli": ("gemini/gemini-2.5-flash", {}, "/v1beta"),
    "vertex": None,  # direct construction, see the module docstring
    "bedrock": ("bedrock/anthropic.claude-3-5-haiku-20241022-v1:0", _BEDROCK, ""),
    "groq": ("groq/llama-3.3-70b-versatile", {}, "/openai/v1"),
    "mistral": ("mistral/mistral-small-latest", {}, "/v1"),
    "deepseek": ("deepseek/deepseek-chat", {}, ""),
    "openrouter": ("openrouter/anthropic/claude-sonnet-4.5", {}, "/api/v1"),
    "ollama": ("ollama/llama3.1", {}, ""),
    "lm_studio": ("lm_studio/local-model", {}, "/v1"),
    "llama_cpp": ("openai/local-model", {}, "/v1"),
}
# OpenAI-compatible APIs and the tools and relays in front of them, as a LiteLLM user
# reaches them: the openai/ route with a custom base (LiteLLM's own routes for some of
# them need account settings this bench does not have).
PROVIDERS.update(
    {
        family: ("openai/local-model", {}, "/v1")
        for family in [
            "moonshot", "zhipu", "dashscope", "siliconflow", "nvidia_nim", "huggingface", "perplexity",
            "cerebras", "cloudflare", "github_copilot", "cursor", "opencode", "goose", "other",
        ]
    }
)
_DROPPED_HEADERS = {"content-length", "transfer-encoding", "content-encoding", "connection"}


def load_fixtures(root: str) -> tuple[list[dict], int]:
    used, skipped = [], 0
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        with open(path) as handle:
            fixture = json.load(handle)
        evidence = fixture.get("evidence", {})
        if not isinstance(evidence.get("status"), int):
            skipped += 1
            continue
        used.append({"path": os.path.relpath(path, root), **evidence})
    return used, skipped


def content_type(evidence: dict) -> str:
    for name, value in (evidence.get("headers") or {}).items():
        if name.lower() == "content-type":
            return value
    body = (evidence.get("body") or "").lstrip()
    if body.startswith(("event:", "data:", ":")):
        return "text/event-stream"
    try:
        json.loads(body)
        return "application/json"
    except ValueError:
        return "text/plain"


def uses_responses_api(evidence: dict) -> bool:
    """Codex, and OpenAI bodies that are Responses API events, go through litellm.aresponses."""
    return evidence["provider"] == "codex" or '"type":"response.' in (evidence.get("body") or "").replace(" ", "")


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def bedrock_stream_exception(evidence: dict) -> tuple[str, bytes] | None:
    """A Bedrock stream error fixture (HTTP 200) as the event it is on the wire: its exception
    type (the ResponseStream member name) and payload. Bedrock sends these inside an
    application/vnd.amazon.eventstream body, not as a JSON body."""
    body = evidence.get("body") or ""
    for name, value in (evidence.get("headers") or {}).items():
        if name.lower() == "x-amzn-errortype":
            return _lower_first(value.split(":", 1)[0]), body.encode()
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if isinstance(parsed, dict) and len(parsed) == 1:
        (name, value), = parsed.items()
        if name.endswith("Exception"):
            return _lower_first(name), json.dumps(value).encode()
    if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):  # the JS SDK's rendering
        return _lower_first(parsed["name"]), json.dumps({"message": parsed.get("message", "")}).encode()
    return None


def eventstream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message (prelude, CRC, string headers, payload, CRC)."""
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v.encode())) + v.encode()
        for k, v in headers.items()
    )
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


async def replay_server(fixtures: list[dict]) -> tuple[web.AppRunner, str]:
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        evidence = fixtures[int(request.match_info["index"])]
        headers = {k: v for k, v in (evidence.get("headers") or {}).items() if k.lower() not in _DROPPED_HEADERS}
        body = (evidence.get("body") or "").encode()
        stream_exception = (
            bedrock_stream_exception(evidence) if evidence["provider"] == "bedrock" and evidence["status"] == 200 else None
        )
        if stream_exception is not None:
            kind, payload = stream_exception
            headers["content-type"] = "application/vnd.amazon.eventstream"
            body = eventstream_frame(
                {":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"}, payload
            )
        else:
            headers["content-type"] = content_type(evidence)
        return web.Response(status=evidence["status"], body=body, headers=headers)

    app = web.Application()
    app.router.add_route("*", "/fx/{index}/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    return runner, f"http://127.0.0.1:{port}"


class Capture:
    """Wraps exception_type: keeps the first call whose exception is still the provider's own."""

    def __init__(self) -> None:
        self.calls: list[dict] | None = None

    def __call__(self, *args, **kwargs):
        if args:  # the positional form: model, original_exception, custom_llm_provider, ...
            names = ("model", "original_exception", "custom_llm_provider", "completion_kwargs", "extra_kwargs")
            kwargs = {**dict(zip(names, args)), **kwargs}
        original = kwargs.get("original_exception")
        if self.calls is not None and not any(
            isinstance(original, kind) for kind in litellm.LITELLM_EXCEPTION_TYPES
        ):
            self.calls.append(dict(kwargs))
        return REAL_EXCEPTION_TYPE(**kwargs)


async def capture_inputs(fixtures: list[dict]) -> tuple[list[dict], list[dict]]:
    """Phase 1: each fixture's exception_type arguments, as LiteLLM builds them for real."""
    capture = Capture()
    litellm_main.exception_type = capture
    streaming_handler.exception_type = capture
    litellm.exception_type = capture  # the Responses route calls litellm.exception_type
    runner, base = await replay_server(fixtures)
    inputs, notes = [], []
    try:
        for index, evidence in enumerate(fixtures):
            provider = evidence["provider"]
            if provider not in PROVIDERS:
                raise SystemExit(f"{evidence['path']}: no LiteLLM provider mapped for {provider!r}")
            spec = PROVIDERS[provider]
            if spec is None:
                inputs.append(direct_vertex_input(evidence))
                notes.append({"path": evidence["path"], "how": "direct"})
                continue
            model, extra, suffix = spec
            capture.calls = []
            raised = None
            common = {"model": model, "stream": True, "api_base": f"{base}/fx/{index}{suffix}", "api_key": KEY,
                      "max_retries": 0, "timeout": 10, **extra}
            try:
                if uses_responses_api(evidence):
                    stream = await litellm.aresponses(input="hi", max_output_tokens=16, **common)
                else:
                    stream = await litellm.acompletion(
                        messages=[{"role": "user", "content": "hi"}], max_tokens=16, **common
                    )
                async for _chunk in stream:
                    pass
            except Exception as error:  # the mapped exception LiteLLM raised
                raised = type(error).__name__
            calls, capture.calls = capture.calls, None
            if not calls:
                notes.append({"path": evidence["path"], "how": "not_raised", "raised": raised})
                continue
            first = calls[0]
            inputs.append({"path": evidence["path"], "provider": provider, "kwargs": first})
            notes.append({"path": evidence["path"], "how": "captured", "raised": raised,
                          "original": type(first["original_exception"]).__name__,
                          "custom_llm_provider": first.get("custom_llm_provider")})
    finally:
        litellm_main.exception_type = REAL_EXCEPTION_TYPE
        streaming_handler.exception_type = REAL_EXCEPTION_TYPE
        litellm.exception_type = REAL_EXCEPTION_TYPE
        await runner.cleanup()
    return inputs, notes


def direct_vertex_input(evidence: dict) -> dict:
    from litellm.llms.vertex_ai.common_utils import VertexAIError

    error = VertexAIError(
        status_code=evidence["status"],
        message=evidence.get("body") or "",
        headers=dict(evidence.get("headers") or {}),
    )
    model = "gemini-2.5-flash"
    return {
        "path": evidence["path"],
        "provider": evidence["provider"],
        "kwargs": {
            "model": model,
            "original_exception": error,
            "custom_llm_provider": "vertex_ai",
            "completion_kwargs": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
            "extra_kwargs": {},
        },
    }


def classify_once(kwargs: dict) -> str:
    try:
        result = REAL_EXCEPTION_TYPE(**kwargs)
    except Exception as error:
        return type(error).__name__
    return type(result).__name__  # returned, not raised: an exception it passes through


def timed_runs(inputs: list[dict], runs: int, min_run_s: float) -> list[float]:
    calls = [item["kwargs"] for item in inputs]
    for kwargs in calls * 3:  # warm-up
        classify_once(kwargs)
    results = []
    for _ in range(runs):
        done = 0
        started = time.perf_counter_ns()
        while True:
            for kwargs in calls:
                try:
                    REAL_EXCEPTION_TYPE(**kwargs)
                except Exception:
                    pass
            done += len(calls)
            elapsed = time.perf_counter_ns() - started
            if elapsed >= min_run_s * 1e9:
                break
        results.append(elapsed / done)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", default=DEFAULT_FIXTURES)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--min-run-s", type=float, default=0.5)
    parser.add_argument("--details", action="store_true", help="also list each fixture's path and class")
    args = parser.parse_args()

    fixtures, skipped = load_fixtures(args.fixtures)
    captured_started = time.perf_counter()
    inputs, notes = asyncio.run(capture_inputs(fixtures))
    capture_s = time.perf_counter() - captured_started

    classes = collections.Counter()
    per_fixture = {}
    for item in inputs:
        first = classify_once(item["kwargs"])
        again = classify_once(item["kwargs"])
        if first != again:  # the mapping must not depend on having seen the exception before
            raise SystemExit(f"{item['path']}: {first} then {again}")
        classes[first] += 1
        per_fixture[item["path"]] = first

    runs = timed_runs(inputs, args.runs, args.min_run_s)
    how = collections.Counter(note["how"] for note in notes)
    by_original = collections.Counter(
        f"{note.get('custom_llm_provider')}:{note.get('original')}" for note in notes if note["how"] == "captured"
    )
    result = {
        "errors": len(inputs),
        "skipped": skipped,
        "not_raised": how.get("not_raised", 0),
        "ns_per_error_median": round(statistics.median(runs), 1),
        "ns_per_error_min": round(min(runs), 1),
        "runs": len(runs),
        "run_ns_per_error": [round(r, 1) for r in runs],
        "litellm": LITELLM_VERSION,
        "classes": dict(classes.most_common()),
        "inputs": {"captured": how.get("captured", 0), "direct": how.get("direct", 0), "capture_s": round(capture_s, 2)},
        "original_exceptions": dict(by_original.most_common()),
        "not_raised_fixtures": [note["path"] for note in notes if note["how"] == "not_raised"],
    }
    if args.details:
        result["per_fixture"] = per_fixture
    ANSWER.write(json.dumps(result, separators=(",", ":")) + "\n")
    ANSWER.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
