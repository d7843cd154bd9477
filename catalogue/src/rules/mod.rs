//! The catalogue's rules, as data: one table per provider family or agent CLI.
//!
//! A rule names what it needs (a status, an error type, an error code, message
//! fragments, a quota id fragment, a transport name, a predicate) and the semantic code
//! it means. All of a rule's conditions must hold. When several rules match, the most
//! specific rank wins ([`Rule::rank`]): a bare status (1) < a [`Rule::broad`] fragment
//! (2) < a [`Rule::general`] fragment (3) < an error type or a transport (4) < an error
//! code (5) < message fragments, quota ids and predicates (6) < a rule marked
//! [`Rule::outranks`] (7). Rules of the winning rank that disagree on the class make the
//! classification low confidence.

use policy::SemanticCode;

use crate::family::Family;

mod anthropic;
mod bedrock;
mod china;
mod cli;
mod gemini;
mod generic;
mod local;
mod openai;
mod openrouter;
mod vendors;
mod words;

pub(crate) use words::RULES as WORDS;

/// A check that reads numbers out of the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Predicate {
    /// `Limit N ... Requested M` with `M > N`: one request can never fit the limit.
    RequestedOverLimit,
    /// The provider asks to wait an hour or more (`retry-after`, or a wait stated in
    /// the text), and its words are about a quota, a pricing or usage tier, billing, a
    /// day or a month: not a per-minute limit.
    LongWaitOnQuota,
    /// An Anthropic subscription window's `anthropic-ratelimit-unified-*-status` header
    /// says `rejected`.
    WindowRejected,
    /// No HTTP status came back (a transport failure, CLI output quoting none): our own
    /// connection failed. A certificate error inside a provider's 503 is the
    /// provider's outage, not our misconfiguration.
    NoResponse,
}

/// The shortest wait [`Predicate::LongWaitOnQuota`] calls long: an hour.
pub(crate) const LONG_WAIT_MS: u64 = 60 * 60 * 1000;

/// A family-specific way a message states a time (SPEC 2.3), read only when its rule
/// matched. Waits stated in words ("try again in 6ms", "retry after 2 seconds") are read
/// from every error text and need no mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessageHint {
    /// Claude Code's `usage limit reached|1796022000` (unix seconds).
    EpochAfterPipe,
    /// A wall-clock reset: Claude Code's `resets 3pm (America/New_York)`, the Gemini
    /// CLI's `Access resets at 10:57 PM GMT-3`, Codex's `try again at Jul 5th, 2026 8:19
    /// PM`, Anthropic's `regain access on 2026-12-01 at 00:00 UTC`. A hint only with a
    /// zone, printed or the evidence's `time_zone`.
    WallClock,
}

/// One catalogue rule. Build with [`rule`] and the `const` methods.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    /// The stable id reported as `rule` (`anthropic.rate_limit_error`).
    pub id: &'static str,
    /// What the evidence means.
    pub code: SemanticCode,
    /// The HTTP status it needs.
    pub status: Option<u16>,
    /// The error type it needs (case-insensitive).
    pub error_type: Option<&'static str>,
    /// The error code it needs (case-insensitive).
    pub error_code: Option<&'static str>,
    /// The transport failure it needs.
    pub transport: Option<&'static str>,
    /// Message fragments that must all appear (ASCII case-insensitive).
    pub text: &'static [&'static str],
    /// Wordings of which one must appear (ASCII case-insensitive): one meaning, said
    /// in the ways providers, SDKs and CLIs print it.
    pub text_any: &'static [&'static str],
    /// With [`Rule::says`]: the exact wordings, one of which must appear; `text_any`
    /// then holds the few short words they share, which the searcher looks for.
    pub says: &'static [&'static str],
    /// A fragment that must appear in the lowercased quota ids.
    pub quota: Option<&'static str>,
    /// A numeric check on the messages.
    pub predicate: Option<Predicate>,
    /// The message hints this rule's messages may carry.
    pub hints: &'static [MessageHint],
    /// Whether this rule outranks every other (rank 7).
    pub outranks: bool,
    /// A rank its message fragments take instead of 6: see [`Rule::broad`] and
    /// [`Rule::general`].
    pub text_rank: Option<u8>,
    /// Whether the generic layer may overrule it: see [`Rule::loose`].
    pub loose: bool,
}

/// A rule with an id and a code and no conditions yet.
pub(crate) const fn rule(id: &'static str, code: SemanticCode) -> Rule {
    Rule {
        id,
        code,
        status: None,
        error_type: None,
        error_code: None,
        transport: None,
        text: &[],
        text_any: &[],
        says: &[],
        quota: None,
        predicate: None,
        hints: &[],
        outranks: false,
        text_rank: None,
        loose: false,
    }
}

impl Rule {
    /// Needs this HTTP status.
    pub const fn status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Needs this error type.
    pub const fn error_type(mut self, error_type: &'static str) -> Self {
        self.error_type = Some(error_type);
        self
    }

    /// Needs this error code.
    pub const fn error_code(mut self, error_code: &'static str) -> Self {
        self.error_code = Some(error_code);
        self
    }

    /// Needs this transport failure.
    pub const fn transport(mut self, transport: &'static str) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Needs all these message fragments.
    pub const fn text(mut self, text: &'static [&'static str]) -> Self {
        self.text = text;
        self
    }

    /// Needs one of these wordings.
    pub const fn text_any(mut self, wordings: &'static [&'static str]) -> Self {
        self.text_any = wordings;
        self
    }

    /// Needs one of these wordings, found where one of the short `words` they share is:
    /// many wordings of one meaning cost the family's searcher only those words.
    pub const fn says(
        mut self,
        words: &'static [&'static str],
        wordings: &'static [&'static str],
    ) -> Self {
        self.text_any = words;
        self.says = wordings;
        self
    }

    /// Needs this fragment in the quota ids.
    pub const fn quota(mut self, quota: &'static str) -> Self {
        self.quota = Some(quota);
        self
    }

    /// Needs this predicate to hold.
    pub const fn when(mut self, predicate: Predicate) -> Self {
        self.predicate = Some(predicate);
        self
    }

    /// Its messages may state a time in these ways.
    pub const fn hints(mut self, hints: &'static [MessageHint]) -> Self {
        self.hints = hints;
        self
    }

    /// Outranks every other matching rule.
    pub const fn outranks(mut self) -> Self {
        self.outranks = true;
        self
    }

    /// Its fragments say only how the failure surfaced ("Connection error", "stream
    /// disconnected"), not why: ranked just above a bare status (2), so any cause named
    /// in the same text decides.
    pub const fn broad(mut self) -> Self {
        self.text_rank = Some(2);
        self
    }

    /// Its fragments name a cause in words any provider or wrapper may use ("rate limit
    /// exceeded"): rank 3, below error types (4) and codes (5), so a provider's own
    /// type, code or a more specific message decides first, and a wrapper's words never
    /// do. Such a rule holds only without a status, in a stream (200), or with a 429 or
    /// a 5xx.
    pub const fn general(mut self) -> Self {
        self.text_rank = Some(3);
        self
    }

    /// It names how a failure was wrapped more than what it is: an error type
    /// providers and gateways give any failure they blame on the request
    /// (`invalid_request_error` with "Model Not Exist", "account deactivated",
    /// "Content Exists Risk"), a tool's label for every 429 it passes on. The generic
    /// layer's words of another hard or outside meaning, said by the provider (not
    /// in a CLI's output), overrule it; words of a passing one never do.
    pub const fn loose(mut self) -> Self {
        self.loose = true;
        self
    }

    /// Whether its fragments are [`Rule::general`] words.
    pub fn is_general(&self) -> bool {
        self.text_rank == Some(3)
    }

    /// How specific the rule is: the most specific matching rank wins.
    pub fn rank(&self) -> u8 {
        if self.outranks {
            7
        } else if let Some(rank) = self.text_rank {
            rank
        } else if !self.text.is_empty()
            || !self.text_any.is_empty()
            || self.quota.is_some()
            || self.predicate.is_some()
        {
            6
        } else if self.error_code.is_some() {
            5
        } else if self.error_type.is_some() || self.transport.is_some() {
            4
        } else {
            1
        }
    }
}

/// The tables whose rules apply to a family, most specific first; the generic table
/// (bare statuses, transport failures) applies to every family and comes last.
pub(crate) fn tables_for(family: Family) -> Vec<&'static [Rule]> {
    let mut tables: Vec<&'static [Rule]> = match family {
        Family::Anthropic => vec![anthropic::RULES],
        Family::Openai => vec![openai::RULES],
        Family::AzureOpenai => vec![vendors::AZURE, openai::RULES],
        Family::Gemini | Family::Vertex => vec![gemini::RULES],
        Family::Bedrock => vec![bedrock::RULES],
        Family::Openrouter => vec![openrouter::RULES, openai::RULES],
        Family::Mistral => vec![vendors::MISTRAL, openai::RULES],
        Family::Groq => vec![vendors::GROQ, openai::RULES],
        Family::Deepseek => vec![vendors::DEEPSEEK, openai::RULES],
        Family::Ollama => vec![local::OLLAMA, openai::RULES],
        Family::OpenaiCompatible => vec![local::COMPATIBLE, openai::RULES],
        Family::ClaudeCode => vec![cli::CLAUDE_CODE, anthropic::RULES],
        Family::Codex => vec![cli::CODEX, openai::RULES],
        Family::GeminiCli => vec![cli::GEMINI_CLI, gemini::RULES],
        // Their own tables only: what they do not decide, the generic layer reads.
        Family::Moonshot => vec![china::MOONSHOT],
        Family::Zhipu => vec![china::ZHIPU],
        Family::Dashscope => vec![china::DASHSCOPE],
        Family::Siliconflow => vec![china::SILICONFLOW],
        Family::NvidiaNim => vec![vendors::NVIDIA_NIM],
        Family::Huggingface => vec![vendors::HUGGINGFACE],
        Family::Perplexity => vec![vendors::PERPLEXITY],
        Family::Cerebras => vec![vendors::CEREBRAS],
        Family::Cloudflare => vec![vendors::CLOUDFLARE],
        Family::GithubCopilot => vec![cli::GITHUB_COPILOT],
        Family::Cursor => vec![cli::CURSOR],
        Family::Opencode => vec![cli::OPENCODE],
        Family::Goose => vec![cli::GOOSE],
        Family::Other => vec![],
    };
    tables.push(generic::RULES);
    tables
}

/// Whether `rule` is one of the generic table's (bare statuses, transports, words any
/// wrapper prints), which the generic layer may overrule; a family's own rules decide.
pub(crate) fn is_generic(rule: &Rule) -> bool {
    // By id (ids are unique): a `const` table's address is not one address.
    generic::RULES.iter().any(|generic| generic.id == rule.id)
}

/// Every table, for checks over all rules.
#[cfg(test)]
pub(crate) fn all_tables() -> [&'static [Rule]; 30] {
    [
        anthropic::RULES,
        openai::RULES,
        vendors::AZURE,
        gemini::RULES,
        bedrock::RULES,
        openrouter::RULES,
        vendors::MISTRAL,
        vendors::GROQ,
        vendors::DEEPSEEK,
        local::OLLAMA,
        local::COMPATIBLE,
        cli::CLAUDE_CODE,
        cli::CODEX,
        cli::GEMINI_CLI,
        china::MOONSHOT,
        china::ZHIPU,
        china::DASHSCOPE,
        china::SILICONFLOW,
        vendors::NVIDIA_NIM,
        vendors::HUGGINGFACE,
        vendors::PERPLEXITY,
        vendors::CEREBRAS,
        vendors::CLOUDFLARE,
        cli::GITHUB_COPILOT,
        cli::CURSOR,
        cli::OPENCODE,
        cli::GOOSE,
        generic::RULES,
        words::RULES,
        &[],
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::all_tables;

    #[test]
    fn rule_ids_are_unique_and_every_rule_has_a_condition() {
        let mut seen = HashSet::new();
        for table in all_tables() {
            for rule in table {
                assert!(seen.insert(rule.id), "duplicate rule id {}", rule.id);
                let has_condition = rule.status.is_some()
                    || rule.error_type.is_some()
                    || rule.error_code.is_some()
                    || rule.transport.is_some()
                    || !rule.text.is_empty()
                    || !rule.text_any.is_empty()
                    || rule.quota.is_some()
                    || rule.predicate.is_some();
                assert!(has_condition, "{} matches everything", rule.id);
                for fragment in rule.text.iter().chain(rule.text_any).chain(rule.says) {
                    assert_eq!(
                        *fragment,
                        fragment.to_ascii_lowercase(),
                        "{}: write fragments lowercased",
                        rule.id
                    );
                }
            }
        }
    }

    /// A [`Rule::says`] wording is only looked for where one of the rule's words was
    /// found: each wording must hold one of them, or it could never match.
    #[test]
    fn every_wording_holds_one_of_its_words() {
        for table in all_tables() {
            for rule in table {
                for wording in rule.says {
                    assert!(
                        rule.text_any.iter().any(|word| wording.contains(word)),
                        "{}: \"{wording}\" holds none of {:?}",
                        rule.id,
                        rule.text_any
                    );
                }
            }
        }
    }
}
