"""The official OpenAI and Anthropic Python SDKs against Switchback's gateway.

Run by server/tests/sdks.rs, which starts the server and a loopback mock
provider and scripts the mock's answers in the order these scenarios call:
for each SDK, a throttled call recovered by a retry (not streamed), an
overloaded candidate skipped for the next (streamed), a stream cut after its
first piece, a tool call (OpenAI whole, Anthropic streamed), an unknown model,
a wrong key, and a client that gives up while
its call waits. The SDKs' own retries are off: every recovery is Switchback's.
Prints one JSON line per scenario; exits non-zero on the first surprise.
"""

import json
import os
import sys

import anthropic
import openai

BASE = os.environ["SWITCHBACK_URL"]
KEY = os.environ["SWITCHBACK_CLIENT_KEY"]
HELLO = [{"role": "user", "content": "Say hello"}]


def report(sdk, scenario, **seen):
    print(json.dumps({"sdk": sdk, "scenario": scenario, **seen}), flush=True)


def expect(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)


def check_openai():
    client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="patient", messages=HELLO)
    answer = raw.parse()
    expect(answer.choices[0].message.content == "Recovered after a throttle", answer)
    expect(raw.headers["x-switchback-attempts"] == "2", raw.headers)
    report("openai", "throttled_then_answered", id=answer.id, attempts=raw.headers["x-switchback-attempts"])

    pieces = []
    stream = client.chat.completions.create(model="fallback", messages=HELLO, stream=True)
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    expect("".join(pieces) == "The second candidate answers", pieces)
    expect(finish == "stop", finish)
    report("openai", "overloaded_skipped", text="".join(pieces))

    pieces = []
    try:
        for chunk in client.chat.completions.create(model="cut", messages=HELLO, stream=True):
            for choice in chunk.choices:
                pieces.append(choice.delta.content or "")
                expect(choice.finish_reason is None, "a cut stream never finishes")
        expect(False, "a cut stream raised nothing")
    except openai.APIError as error:
        expect("".join(pieces) == "Hel", pieces)
        report("openai", "stream_cut", error=type(error).__name__, text="".join(pieces))

    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    answer = client.chat.completions.create(model="tools", messages=HELLO, tools=tools)
    call = answer.choices[0].message.tool_calls[0]
    expect(call.function.name == "read_file", answer)
    expect(json.loads(call.function.arguments) == {"path": "a.rs"}, call)
    expect(answer.choices[0].finish_reason == "tool_calls", answer)
    report("openai", "tool_call", name=call.function.name, id=call.id)

    try:
        client.chat.completions.create(model="no-such-profile", messages=HELLO)
        expect(False, "an unknown model was answered")
    except openai.NotFoundError as error:
        expect(error.body["code"] == "model_not_found", error.body)
        report("openai", "unknown_model", status=error.status_code)

    wrong = openai.OpenAI(base_url=BASE + "/v1", api_key="sbk_wrong", max_retries=0)
    try:
        wrong.chat.completions.create(model="patient", messages=HELLO)
        expect(False, "a wrong key was admitted")
    except openai.AuthenticationError as error:
        report("openai", "wrong_key", status=error.status_code)

    impatient = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0, timeout=1.5)
    try:
        impatient.chat.completions.create(model="patient", messages=HELLO)
        expect(False, "a waiting call answered")
    except openai.APITimeoutError:
        report("openai", "left_while_waiting")


def check_anthropic():
    client = anthropic.Anthropic(base_url=BASE, api_key=KEY, max_retries=0)
    raw = client.messages.with_raw_response.create(model="patient", max_tokens=64, messages=HELLO)
    message = raw.parse()
    expect(message.content[0].text == "Recovered after a throttle", message)
    expect(message.stop_reason == "end_turn", message.stop_reason)
    expect(raw.headers["x-switchback-attempts"] == "2", raw.headers)
    report("anthropic", "throttled_then_answered", id=message.id, attempts=raw.headers["x-switchback-attempts"])

    with client.messages.stream(model="fallback", max_tokens=64, messages=HELLO) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expect(text == "The second candidate answers", text)
    expect(final.stop_reason == "end_turn", final.stop_reason)
    report("anthropic", "overloaded_skipped", text=text)

    pieces = []
    try:
        with client.messages.stream(model="cut", max_tokens=64, messages=HELLO) as stream:
            for piece in stream.text_stream:
                pieces.append(piece)
            stream.get_final_message()
        expect(False, "a cut stream raised nothing")
    except anthropic.APIError as error:
        expect("".join(pieces) == "Hel", pieces)
        report("anthropic", "stream_cut", error=type(error).__name__, text="".join(pieces))

    tools = [{"name": "read_file", "input_schema": {
        "type": "object", "properties": {"path": {"type": "string"}}}}]
    with client.messages.stream(model="tools", max_tokens=64, messages=HELLO, tools=tools) as stream:
        final = stream.get_final_message()
    calls = [block for block in final.content if block.type == "tool_use"]
    expect(len(calls) == 1 and calls[0].name == "read_file", final)
    expect(calls[0].input == {"path": "a.rs"}, calls[0])
    expect(final.stop_reason == "tool_use", final.stop_reason)
    report("anthropic", "tool_call", name=calls[0].name, id=calls[0].id)

    try:
        client.messages.create(model="no-such-profile", max_tokens=64, messages=HELLO)
        expect(False, "an unknown model was answered")
    except anthropic.NotFoundError as error:
        report("anthropic", "unknown_model", status=error.status_code)

    wrong = anthropic.Anthropic(base_url=BASE, api_key="sbk_wrong", max_retries=0)
    try:
        wrong.messages.create(model="patient", max_tokens=64, messages=HELLO)
        expect(False, "a wrong key was admitted")
    except anthropic.AuthenticationError as error:
        report("anthropic", "wrong_key", status=error.status_code)

    impatient = anthropic.Anthropic(base_url=BASE, api_key=KEY, max_retries=0, timeout=1.5)
    try:
        impatient.messages.create(model="patient", max_tokens=64, messages=HELLO)
        expect(False, "a waiting call answered")
    except anthropic.APITimeoutError:
        report("anthropic", "left_while_waiting")


if __name__ == "__main__":
    {"openai": check_openai, "anthropic": check_anthropic}[sys.argv[1]]()
