//! Local and self-hosted servers: Ollama, and the OpenAI-compatible vLLM, LM Studio and
//! llama.cpp servers.

use policy::SemanticCode::*;

use super::{Rule, rule};

/// Ollama. Source: <https://github.com/ollama/ollama/blob/main/docs/api.md>.
#[rustfmt::skip]
pub(crate) const OLLAMA: &[Rule] = &[
    rule("ollama.try_pulling", ModelUnavailable).text(&["try pulling it first"]),
    // The model's manifest is not on disk: it was never pulled.
    rule("ollama.manifest_missing", ModelUnavailable).text(&["/manifests/", "no such file or directory"]),
    rule("ollama.pull_manifest", ModelUnavailable).text(&["pull model manifest"]),
    rule("ollama.could_not_connect", Network).text(&["could not connect to ollama"]),
    rule("ollama.runner_terminated", ServerError).text(&["llama runner process has terminated"]),
    // The runner died loading the model: a file it cannot read, or a model too large
    // for the memory there is.
    rule("ollama.runner_load_error", ModelUnavailable)
        .text(&["llama runner process has terminated", "error loading model"])
        .outranks(),
    rule("ollama.runner_out_of_memory", ModelUnavailable)
        .says(&["out of memory", "unable to allocate", "enough available memory"], &[
            "out of memory", "unable to allocate", "not have enough available memory",
        ])
        .outranks(),
    rule("ollama.not_enough_memory", ProviderMisconfigured).text(&["requires more system memory"]),
    rule("ollama.no_tools", ProviderMisconfigured).text(&["does not support tools"]),
    rule("ollama.no_thinking", ProviderMisconfigured).text(&["does not support thinking"]),
];

/// vLLM (`{"object":"error","type":"BadRequestError",...}`), llama.cpp's server
/// (`exceed_context_size_error`, `unavailable_error`) and LM Studio.
#[rustfmt::skip]
pub(crate) const COMPATIBLE: &[Rule] = &[
    rule("compatible.context_size_exceeded", ContextLengthExceeded).text(&["context size has been exceeded"]),
    rule("compatible.exceeds_context_size", ContextLengthExceeded).text(&["exceeds the available context size"]),
    rule("compatible.loading_model", Overloaded).text(&["loading model"]),
    // "Error loading model", "Failed to load the model": the load failed, it is not
    // under way.
    rule("compatible.failed_to_load_model", ModelUnavailable)
        .says(&["error loading", "failed to load"], &["error loading model", "failed to load the model", "failed to load model"])
        .outranks(),
    rule("compatible.exceed_context_size_error", ContextLengthExceeded).error_type("exceed_context_size_error"),
    rule("compatible.unavailable_error", Overloaded).error_type("unavailable_error"),
    rule("compatible.not_supported_error", ProviderMisconfigured).error_type("not_supported_error"),
    rule("compatible.not_found_error", ModelUnavailable).error_type("NotFoundError"),
    rule("compatible.bad_request_error", InvalidRequest).error_type("BadRequestError"),
];
