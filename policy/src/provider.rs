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
    /// An agent CLI (Claude Code, Codex, the Gemini CLI, any command) run on
    /// the server, one process per call ([`CliConfig`]).
    Cli,
}

impl ProviderKind {
    /// Every kind, in the order forms list them.
    pub const ALL: [ProviderKind; 5] = [
        Self::Anthropic,
        Self::Openai,
        Self::OpenaiCompatible,
        Self::Simulated,
        Self::Cli,
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
            Self::Cli => "cli",
        }
    }

    /// The family whose errors to expect when none is given: the kind itself,
    /// and the generic OpenAI-compatible shapes for `simulated` and `cli` (a
    /// CLI's preset names its own: [`CliPreset::family`]).
    pub fn default_family(self) -> ProviderFamily {
        match self {
            Self::Anthropic => ProviderFamily::Anthropic,
            Self::Openai => ProviderFamily::Openai,
            Self::OpenaiCompatible | Self::Simulated | Self::Cli => {
                ProviderFamily::OpenaiCompatible
            }
        }
    }

    /// Whether the kind needs a base URL (a simulated provider and a CLI have none).
    pub fn needs_base_url(self) -> bool {
        !matches!(self, Self::Simulated | Self::Cli)
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
    /// The Claude Code CLI.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    GeminiCli,
    /// Moonshot's API and Kimi Code.
    Moonshot,
    /// Zhipu's GLM API (BigModel, Z.ai).
    Zhipu,
    /// Alibaba's DashScope (Qwen, Model Studio).
    Dashscope,
    /// SiliconFlow.
    Siliconflow,
    /// Nvidia NIM.
    NvidiaNim,
    /// Hugging Face Inference Providers.
    Huggingface,
    /// Perplexity.
    Perplexity,
    /// Cerebras.
    Cerebras,
    /// Cloudflare Workers AI and AI Gateway.
    Cloudflare,
    /// GitHub Copilot's CLI (run by the generic CLI preset).
    GithubCopilot,
    /// Cursor's CLI, `cursor-agent` (run by the generic CLI preset).
    Cursor,
    /// opencode (run by the generic CLI preset).
    Opencode,
    /// Goose (run by the generic CLI preset).
    Goose,
}

impl ProviderFamily {
    /// Every family, in the order forms list them.
    pub const ALL: [ProviderFamily; 27] = [
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
        Self::ClaudeCode,
        Self::Codex,
        Self::GeminiCli,
        Self::Moonshot,
        Self::Zhipu,
        Self::Dashscope,
        Self::Siliconflow,
        Self::NvidiaNim,
        Self::Huggingface,
        Self::Perplexity,
        Self::Cerebras,
        Self::Cloudflare,
        Self::GithubCopilot,
        Self::Cursor,
        Self::Opencode,
        Self::Goose,
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
            Self::ClaudeCode => "claude_code",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini_cli",
            Self::Moonshot => "moonshot",
            Self::Zhipu => "zhipu",
            Self::Dashscope => "dashscope",
            Self::Siliconflow => "siliconflow",
            Self::NvidiaNim => "nvidia_nim",
            Self::Huggingface => "huggingface",
            Self::Perplexity => "perplexity",
            Self::Cerebras => "cerebras",
            Self::Cloudflare => "cloudflare",
            Self::GithubCopilot => "github_copilot",
            Self::Cursor => "cursor",
            Self::Opencode => "opencode",
            Self::Goose => "goose",
        }
    }
}

/// Stands for the model's name in a command's arguments.
pub const MODEL_PLACEHOLDER: &str = "{model}";

/// Stands for the prompt in a command's arguments; a command without it reads
/// the prompt on its standard input.
pub const PROMPT_PLACEHOLDER: &str = "{prompt}";

/// Which CLI a command runs, and so how its output reads.
///
/// ```
/// use policy::CliPreset;
/// assert_eq!(CliPreset::ClaudeCode.as_str(), "claude_code");
/// assert_eq!(CliPreset::Codex.family(), Some(policy::ProviderFamily::Codex));
/// assert_eq!(CliPreset::Generic.family(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CliPreset {
    /// Claude Code, `claude -p --output-format stream-json --verbose`.
    ClaudeCode,
    /// OpenAI's Codex CLI, `codex exec --json`.
    Codex,
    /// Google's Gemini CLI, `gemini --output-format stream-json --prompt=...`.
    GeminiCli,
    /// Any command: its stdout is the answer.
    Generic,
}

impl CliPreset {
    /// Every preset, in the order forms list them.
    pub const ALL: [CliPreset; 4] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::GeminiCli,
        Self::Generic,
    ];

    /// The snake_case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude_code",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini_cli",
            Self::Generic => "generic",
        }
    }

    /// The family its failures are read with (the generic preset takes its
    /// provider's).
    pub fn family(self) -> Option<ProviderFamily> {
        match self {
            Self::ClaudeCode => Some(ProviderFamily::ClaudeCode),
            Self::Codex => Some(ProviderFamily::Codex),
            Self::GeminiCli => Some(ProviderFamily::GeminiCli),
            Self::Generic => None,
        }
    }

    /// The command it runs unless a provider says otherwise: the program, then
    /// its arguments, `{model}` and `{prompt}` filled in at each call.
    ///
    /// ```
    /// assert_eq!(policy::CliPreset::Codex.command().join(" "), "codex exec --json --model {model}");
    /// ```
    pub fn command(self) -> Vec<String> {
        let words: &[&str] = match self {
            Self::ClaudeCode => &[
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                MODEL_PLACEHOLDER,
            ],
            Self::Codex => &["codex", "exec", "--json", "--model", MODEL_PLACEHOLDER],
            Self::GeminiCli => &[
                "gemini",
                "--output-format",
                "stream-json",
                "--model",
                MODEL_PLACEHOLDER,
                // One word, so a prompt that begins with `-` is not read as a flag.
                "--prompt={prompt}",
            ],
            Self::Generic => &[],
        };
        words.iter().map(|word| (*word).to_owned()).collect()
    }
}

/// How to run an agent CLI.
///
/// ```
/// let config: policy::CliConfig = serde_json::from_value(serde_json::json!({
///     "preset": "claude_code",
///     "env": ["HOME", "PATH", "ANTHROPIC_API_KEY"],
/// })).unwrap();
/// assert_eq!(config.program_and_arguments()[0], "claude");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliConfig {
    /// Which CLI, and so how its output reads.
    pub preset: CliPreset,
    /// The program and its arguments, with `{model}` and `{prompt}` filled in at
    /// each call; empty for the preset's. Never run through a shell.
    #[serde(default)]
    pub command: Vec<String>,
    /// Where it runs; the server's own working directory when unset.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// The environment variables passed through from the server's environment;
    /// every other one is cleared.
    #[serde(default)]
    pub env: Vec<String>,
    /// The IANA time zone the CLI prints its wall-clock resets in ("resets
    /// 3pm"); the server's own when unset.
    #[serde(default)]
    pub time_zone: Option<String>,
}

impl CliConfig {
    /// A preset's command, with no variable passed through.
    pub fn preset(preset: CliPreset) -> Self {
        Self {
            preset,
            command: Vec::new(),
            working_dir: None,
            env: Vec::new(),
            time_zone: None,
        }
    }

    /// The command as configured, or the preset's.
    pub fn program_and_arguments(&self) -> Vec<String> {
        if self.command.is_empty() {
            self.preset.command()
        } else {
            self.command.clone()
        }
    }
}

/// Whether an environment variable's name says its value is a secret (it
/// holds `KEY`, `TOKEN`, `SECRET`, `PASSWORD` or `CREDENTIAL`, in any case):
/// such a variable is passed to a CLI only when the server allows it as a key
/// variable, and its value is scrubbed from what the CLI prints.
///
/// ```
/// assert!(policy::looks_like_a_secret("GITHUB_TOKEN"));
/// assert!(policy::looks_like_a_secret("anthropic_api_key"));
/// assert!(!policy::looks_like_a_secret("HOME"));
/// ```
pub fn looks_like_a_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]
        .iter()
        .any(|word| name.contains(word))
}
