"""What both peer scripts do before and after importing LiteLLM: keep it off the network and
off stdout, and silence its callbacks.

    import quiet
    quiet.offline()                  # before `import litellm`
    ANSWER = quiet.claim_stdout()    # the one JSON answer goes here
    import litellm
    quiet.silence(litellm)
"""

import os
import sys

# Every provider's own settings: none from the caller's environment may reach a deployment.
_PROVIDER_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AZURE_", "GEMINI_", "GOOGLE_", "VERTEX", "AWS_PROFILE",
                      "GROQ_", "MISTRAL_", "DEEPSEEK_", "OPENROUTER_", "OLLAMA_")


def offline() -> None:
    """Before LiteLLM is imported: no fetch of the model cost map (or any other catalogue
    LiteLLM loads from GitHub on its own), quiet logs, no provider settings from outside.
    LITELLM_OFFLINE_MODE covers every such fetch (litellm/litellm_core_utils/offline_mode.py);
    the LITELLM_LOCAL_* variables name the ones known."""
    for name in ("LITELLM_OFFLINE_MODE", "LITELLM_LOCAL_MODEL_COST_MAP",
                 "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "LITELLM_LOCAL_BLOG_POSTS",
                 "LITELLM_LOCAL_POLICY_TEMPLATES", "LITELLM_LOCAL_AUTOROUTER_PRESETS"):
        os.environ[name] = "True"
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    # botocore must never look for credentials or a region on the network (instance metadata).
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    for name in list(os.environ):
        if name.startswith(_PROVIDER_PREFIXES):
            os.environ.pop(name, None)


def claim_stdout():
    """Keep a private copy of stdout for the answer and send fd 1 (and sys.stdout) to stderr:
    nothing LiteLLM prints can mix into the answer."""
    sys.stdout.flush()
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(answer_fd, "w")


def silence(litellm) -> None:
    """No debug banners, message logging or callbacks. The Router sets suppress_debug_info
    when it is built (router_rust/surface/settings.py); without it exception_type prints a
    banner on every call."""
    litellm.suppress_debug_info = True
    litellm.turn_off_message_logging = True
    for name in ("input_callback", "success_callback", "failure_callback", "service_callback",
                 "callbacks", "_async_success_callback", "_async_failure_callback",
                 "_async_input_callback"):
        if isinstance(getattr(litellm, name, None), list):
            getattr(litellm, name).clear()
