//! Provider families and agent CLIs: whose errors to expect (SPEC 1, 2.1).

/// Whose errors the evidence holds: a provider family or an agent CLI.
///
/// ```
/// use catalogue::Family;
/// assert_eq!(Family::from_provider("Azure-OpenAI"), Family::AzureOpenai);
/// assert_eq!(Family::from_provider("vllm"), Family::OpenaiCompatible);
/// assert_eq!(Family::from_provider("claude-code"), Family::ClaudeCode);
/// assert_eq!(Family::from_provider("simulated"), Family::Other);
/// assert_eq!(Family::Gemini.as_str(), "gemini");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Chat Completions and Responses APIs.
    Openai,
    /// Azure OpenAI.
    AzureOpenai,
    /// Google's Gemini API (AI Studio).
    Gemini,
    /// Google Vertex AI (Gemini models).
    Vertex,
    /// AWS Bedrock runtime.
    Bedrock,
    /// OpenRouter (upstream errors nested in `error.metadata.raw`).
    Openrouter,
    /// Mistral's API.
    Mistral,
    /// Groq's API.
    Groq,
    /// DeepSeek's API.
    Deepseek,
    /// A local Ollama server.
    Ollama,
    /// Other OpenAI-compatible servers: vLLM, LM Studio, llama.cpp.
    OpenaiCompatible,
    /// The Claude Code CLI.
    ClaudeCode,
    /// The Codex CLI.
    Codex,
    /// The Gemini CLI.
    GeminiCli,
    /// Moonshot's API and Kimi Code.
    Moonshot,
    /// Zhipu's GLM API (BigModel, Z.ai).
    Zhipu,
    /// Alibaba's DashScope (Qwen, Model Studio, Bailian).
    Dashscope,
    /// SiliconFlow.
    Siliconflow,
    /// Nvidia NIM (build.nvidia.com's API).
    NvidiaNim,
    /// Hugging Face Inference Providers.
    Huggingface,
    /// Perplexity's API.
    Perplexity,
    /// Cerebras's API.
    Cerebras,
    /// Cloudflare Workers AI and AI Gateway.
    Cloudflare,
    /// GitHub Copilot (chat and CLI).
    GithubCopilot,
    /// Cursor (the editor and `cursor-agent`).
    Cursor,
    /// opencode.
    Opencode,
    /// Goose.
    Goose,
    /// Anything else: only bare statuses and transport failures are recognized.
    Other,
}

impl Family {
    /// Every family, in declaration order.
    pub const ALL: [Family; 29] = [
        Self::Anthropic,
        Self::Openai,
        Self::AzureOpenai,
        Self::Gemini,
        Self::Vertex,
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
        Self::Other,
    ];

    /// Reads a `provider` name: case, `-` and spaces do not matter, and common aliases
    /// (`google`, `azure`, `aws_bedrock`, `vllm`, `lmstudio`, `llama.cpp`, `claude`, ...) are
    /// understood. Unknown names are [`Family::Other`].
    pub fn from_provider(provider: &str) -> Self {
        // The usual case: a name already lowercase with `_` between its words (every
        // canonical name, as SPEC 1 writes it), which reading would leave as it is.
        // Every name the match knows is such a name, so one it knows is read at once.
        let family = Self::from_name(provider);
        if family != Self::Other
            || provider
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte == b'_')
        {
            return family;
        }
        let mut name = String::with_capacity(provider.len());
        for character in provider.trim().chars() {
            match character {
                '-' | ' ' | '.' => name.push('_'),
                other => name.push(other.to_ascii_lowercase()),
            }
        }
        Self::from_name(&name)
    }

    /// The family a provider name names, read as [`Family::from_provider`] reads it:
    /// lowercase, `_` between words.
    fn from_name(name: &str) -> Self {
        match name {
            "anthropic" | "claude_api" => Self::Anthropic,
            "openai" => Self::Openai,
            "azure_openai" | "azure" | "azureopenai" => Self::AzureOpenai,
            "gemini" | "google" | "google_ai_studio" | "gemini_api" => Self::Gemini,
            "vertex" | "vertex_ai" | "vertexai" | "google_vertex" => Self::Vertex,
            "bedrock" | "aws_bedrock" | "amazon_bedrock" => Self::Bedrock,
            "openrouter" => Self::Openrouter,
            "mistral" | "mistralai" => Self::Mistral,
            "groq" => Self::Groq,
            "deepseek" => Self::Deepseek,
            "ollama" => Self::Ollama,
            "openai_compatible" | "vllm" | "lm_studio" | "lmstudio" | "llama_cpp" | "llamacpp"
            | "llama_server" => Self::OpenaiCompatible,
            "claude_code" | "claude" | "claudecode" => Self::ClaudeCode,
            "codex" | "codex_cli" => Self::Codex,
            "gemini_cli" | "geminicli" => Self::GeminiCli,
            "moonshot" | "moonshotai" | "moonshot_ai" | "kimi" | "kimi_code" => Self::Moonshot,
            "zhipu" | "zhipuai" | "glm" | "bigmodel" | "zai" | "z_ai" => Self::Zhipu,
            "dashscope" | "qwen" | "alibaba" | "aliyun" | "bailian" | "model_studio" => {
                Self::Dashscope
            }
            "siliconflow" | "silicon_flow" => Self::Siliconflow,
            "nvidia_nim" | "nvidia" | "nim" => Self::NvidiaNim,
            "huggingface" | "hugging_face" | "hf" => Self::Huggingface,
            "perplexity" => Self::Perplexity,
            "cerebras" => Self::Cerebras,
            "cloudflare" | "workers_ai" | "cloudflare_ai_gateway" => Self::Cloudflare,
            "github_copilot" | "copilot" | "copilot_cli" => Self::GithubCopilot,
            "cursor" | "cursor_agent" => Self::Cursor,
            "opencode" => Self::Opencode,
            "goose" => Self::Goose,
            _ => Self::Other,
        }
    }

    /// The family an OpenRouter `metadata.provider_name` names, for classifying the
    /// nested upstream error.
    ///
    /// ```
    /// use catalogue::Family;
    /// assert_eq!(Family::from_openrouter_provider_name("Google AI Studio"), Family::Gemini);
    /// assert_eq!(Family::from_openrouter_provider_name("BaseTen"), Family::OpenaiCompatible);
    /// ```
    pub fn from_openrouter_provider_name(provider_name: &str) -> Self {
        let name = provider_name.to_ascii_lowercase();
        if name.contains("anthropic") {
            Self::Anthropic
        } else if name.contains("azure") {
            Self::AzureOpenai
        } else if name.contains("openai") {
            Self::Openai
        } else if name.contains("vertex") {
            Self::Vertex
        } else if name.contains("google") {
            Self::Gemini
        } else if name.contains("bedrock") {
            Self::Bedrock
        } else if name.contains("mistral") {
            Self::Mistral
        } else if name.contains("groq") {
            Self::Groq
        } else if name.contains("deepseek") {
            Self::Deepseek
        } else if name.contains("moonshot") {
            Self::Moonshot
        } else if name.contains("z.ai") || name.contains("zhipu") {
            Self::Zhipu
        } else if name.contains("alibaba") {
            Self::Dashscope
        } else if name.contains("siliconflow") {
            Self::Siliconflow
        } else if name.contains("cerebras") {
            Self::Cerebras
        } else {
            Self::OpenaiCompatible
        }
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::AzureOpenai => "azure_openai",
            Self::Gemini => "gemini",
            Self::Vertex => "vertex",
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
            Self::Other => "other",
        }
    }

    /// The zone a wall-clock time this family prints without one is in: China Standard
    /// Time for the providers in China, none for the rest (the evidence's `time_zone`
    /// decides first).
    ///
    /// ```
    /// use catalogue::Family;
    /// assert_eq!(Family::Zhipu.default_time_zone(), Some("Asia/Shanghai"));
    /// assert_eq!(Family::Openai.default_time_zone(), None);
    /// ```
    pub fn default_time_zone(self) -> Option<&'static str> {
        match self {
            Self::Moonshot | Self::Zhipu | Self::Dashscope | Self::Siliconflow => {
                Some("Asia/Shanghai")
            }
            _ => None,
        }
    }

    /// Whether this family's output prints the conversation (Claude Code's, Codex's
    /// and the Gemini CLI's JSON streams), so that it holds the model's own words
    /// beside any error.
    pub fn prints_model_words(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Codex | Self::GeminiCli)
    }

    /// The index of this family in [`Family::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::Family;

    /// Every family a provider can be set up with has its own rules here.
    #[test]
    fn every_provider_family_reads_as_its_own() {
        for family in policy::ProviderFamily::ALL {
            let read = Family::from_provider(family.as_str());
            assert_ne!(read, Family::Other, "{}", family.as_str());
            assert_eq!(read.as_str(), family.as_str());
            // A table of its own besides the generic table every family has.
            assert!(
                crate::rules::tables_for(read).len() >= 2,
                "{}",
                family.as_str()
            );
        }
    }

    /// `from_provider` takes a name the match knows as it is: that is right only while
    /// every name there is one reading leaves as it is (lowercase, `_` between words).
    #[test]
    fn every_name_the_match_knows_is_read_as_it_is() {
        let source = include_str!("family.rs");
        let start = source.find("fn from_name(").expect("the match of names");
        let end = start + source[start..].find("_ => Self::Other").expect("its end");
        let names: Vec<&str> = source[start..end].split('"').skip(1).step_by(2).collect();
        assert!(names.len() > 60, "{names:?}");
        for name in names {
            assert!(
                name.bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte == b'_'),
                "{name}"
            );
            assert_eq!(
                Family::from_provider(name),
                Family::from_name(name),
                "{name}"
            );
        }
    }

    #[test]
    fn every_family_reads_its_own_name() {
        for (index, family) in Family::ALL.into_iter().enumerate() {
            assert_eq!(family.index(), index);
            if family != Family::Other {
                assert_eq!(Family::from_provider(family.as_str()), family);
            }
        }
    }
}
