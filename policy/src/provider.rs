//! What a provider is (SPEC 1): the wire protocol it speaks (its kind) and
//! whose errors to expect (its family). The `api` crate checks providers as
//! they arrive; these are the values both sides agree on.

use serde::{Deserialize, Serialize};

/// The wire protocol a provider speaks.
///
/// ```
/// assert_eq!(policy::ProviderKind::Anthropic.default_family(), policy::ProviderFamily::Anthropic);
/// assert_eq!(serde_json::to_value(policy::ProviderKind::OpenaiCompatible).unwrap(), "openai_compatible");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// `POST {base_url}/v1/messages`, streaming.
    Anthropic,
    /// `POST {base_url}/v1/chat/completions`, streaming.
    Openai,
    /// The OpenAI protocol served by someone else (vLLM, Ollama, OpenRouter, ...).
    OpenaiCompatible,
    /// An in-process provider that fails on a script: demos and tests.
    Simulated,
}

impl ProviderKind {
    /// Every kind, in the order forms list them.
    pub const ALL: [ProviderKind; 4] = [
        Self::Anthropic,
        Self::Openai,
        Self::OpenaiCompatible,
        Self::Simulated,
    ];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::ProviderKind::Simulated.as_str(), "simulated");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::OpenaiCompatible => "openai_compatible",
            Self::Simulated => "simulated",
        }
    }

    /// The family whose errors to expect when none is given: the kind itself,
    /// and the generic OpenAI-compatible shapes for `simulated`.
    pub fn default_family(self) -> ProviderFamily {
        match self {
            Self::Anthropic => ProviderFamily::Anthropic,
            Self::Openai => ProviderFamily::Openai,
            Self::OpenaiCompatible | Self::Simulated => ProviderFamily::OpenaiCompatible,
        }
    }

    /// Whether the kind needs a base URL (a simulated provider has none).
    pub fn needs_base_url(self) -> bool {
        self != Self::Simulated
    }

    /// Whether the kind needs a key (local OpenAI-compatible servers often do not).
    pub fn needs_key(self) -> bool {
        matches!(self, Self::Anthropic | Self::Openai)
    }
}

/// Whose errors a provider sends: selects the catalogue's rules.
///
/// ```
/// assert_eq!(policy::ProviderFamily::AzureOpenai.as_str(), "azure_openai");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFamily {
    /// Anthropic's API.
    Anthropic,
    /// OpenAI's API.
    Openai,
    /// Azure OpenAI.
    AzureOpenai,
    /// Google Gemini (and Vertex AI).
    Gemini,
    /// AWS Bedrock.
    Bedrock,
    /// OpenRouter.
    Openrouter,
    /// Mistral.
    Mistral,
    /// Groq.
    Groq,
    /// DeepSeek.
    Deepseek,
    /// Ollama.
    Ollama,
    /// Any other OpenAI-compatible server.
    OpenaiCompatible,
}

impl ProviderFamily {
    /// Every family, in the order forms list them.
    pub const ALL: [ProviderFamily; 11] = [
        Self::Anthropic,
        Self::Openai,
        Self::AzureOpenai,
        Self::Gemini,
        Self::Bedrock,
        Self::Openrouter,
        Self::Mistral,
        Self::Groq,
        Self::Deepseek,
        Self::Ollama,
        Self::OpenaiCompatible,
    ];

    /// The snake_case name, as in JSON and in the catalogue's evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::AzureOpenai => "azure_openai",
            Self::Gemini => "gemini",
            Self::Bedrock => "bedrock",
            Self::Openrouter => "openrouter",
            Self::Mistral => "mistral",
            Self::Groq => "groq",
            Self::Deepseek => "deepseek",
            Self::Ollama => "ollama",
            Self::OpenaiCompatible => "openai_compatible",
        }
    }
}
