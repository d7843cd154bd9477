//! What the engine asks of a provider and what it gets back.

use serde::{Deserialize, Serialize};

/// Who wrote a message of the conversation.
///
/// ```
/// assert_eq!(serde_json::to_value(providers::Role::Assistant).unwrap(), "assistant");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person (or the engine on their behalf).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The name both wire formats use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

impl Message {
    /// A message from the user.
    ///
    /// ```
    /// let message = providers::Message::user("Hello");
    /// assert_eq!(message.role, providers::Role::User);
    /// ```
    pub fn user(content: &str) -> Self {
        Self {
            role: Role::User,
            content: content.to_owned(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: &str) -> Self {
        Self {
            role: Role::Assistant,
            content: content.to_owned(),
        }
    }
}

/// One call of one model on one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRequest {
    /// The provider's name for the model (`claude-sonnet-4-5`, `gpt-4.1`, ...).
    pub model: String,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// 0-based number of this call for this task on this candidate (selects the simulated step)
    pub call_index: u32,
    /// A gateway client's own request, sent in place of `messages` (passed
    /// through, or translated to the candidate's protocol); `None` for a task.
    pub client: Option<crate::translate::ClientRequest>,
}

/// A tool call in an answer: the model asks its client to run `name` with
/// `arguments` (JSON text, as the model wrote it). Only a gateway client's
/// request offers tools, so only its answers have them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, which the client's tool result names.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, a JSON object as text.
    pub arguments: String,
}

/// A piece of a tool call as the answer streams it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPiece {
    /// The `index`-th tool call of the answer (from 0) begins.
    Begin {
        /// Its place among the answer's tool calls.
        index: usize,
        /// The provider's id for it.
        id: String,
        /// The tool.
        name: String,
    },
    /// More of the `index`-th tool call's arguments.
    Arguments {
        /// Its place among the answer's tool calls.
        index: usize,
        /// The next piece of the arguments' JSON text.
        json: String,
    },
}

impl ToolPiece {
    /// Add this piece to the tool calls it belongs to: a call begun, or more of
    /// a call's arguments (a piece of a call not begun is dropped).
    ///
    /// ```
    /// use providers::ToolPiece;
    /// let mut calls = Vec::new();
    /// ToolPiece::Begin { index: 0, id: "c1".into(), name: "ls".into() }.add_to(&mut calls);
    /// ToolPiece::Arguments { index: 0, json: "{}".into() }.add_to(&mut calls);
    /// ToolPiece::Arguments { index: 3, json: "lost".into() }.add_to(&mut calls);
    /// assert_eq!((calls.len(), calls[0].arguments.as_str()), (1, "{}"));
    /// ```
    pub fn add_to(&self, calls: &mut Vec<ToolCall>) {
        match self {
            Self::Begin { id, name, .. } => calls.push(ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: String::new(),
            }),
            Self::Arguments { index, json } => {
                if let Some(call) = calls.get_mut(*index) {
                    call.arguments.push_str(json);
                }
            }
        }
    }
}

/// Why a complete answer stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// The model finished (`end_turn`, `stop_sequence`, `stop`).
    End,
    /// The answer reached `max_tokens` and was cut off (`max_tokens`, `length`).
    MaxTokens,
    /// Any other reason the provider gave (`tool_use`, `content_filter`, `refusal`, ...).
    Other(String),
}

/// What became of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// The provider answered completely.
    Answered {
        /// The answer's text, every streamed piece joined.
        text: String,
        /// Why the answer stopped.
        stop: StopReason,
        /// The tool calls the answer made, in order (none but for a gateway
        /// client's request that offered tools).
        tool_calls: Vec<ToolCall>,
    },
    /// The call failed. `partial_output` is the text already streamed before the failure (non-empty => the failure is an unsafe effect for the engine).
    Failed {
        /// What the failure left behind, for the catalogue (`observed_at_ms` unset: the
        /// engine stamps it from its clock).
        evidence: catalogue::Evidence,
        /// The output streamed before the failure, text and tool calls (each
        /// written `[tool call NAME ARGUMENTS]`); empty when none was.
        partial_output: String,
    },
}

impl CallOutcome {
    /// A failure before any output.
    pub fn failed(evidence: catalogue::Evidence) -> Self {
        Self::Failed {
            evidence,
            partial_output: String::new(),
        }
    }
}

/// The tokens a call used, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request (OpenAI's `prompt_tokens`, Anthropic's `input_tokens`).
    pub input_tokens: u64,
    /// Tokens of the answer (`completion_tokens`, `output_tokens`).
    pub output_tokens: u64,
}

/// Sees an answer's text as it streams, a piece at a time, before the call's
/// outcome: the pieces, joined, are the answer's text (or, when the call fails,
/// the output streamed before the failure), scrubbed of the provider's key as
/// they are. Called on the caller's task, in order; it must not block.
pub trait Observer: Send + Sync {
    /// The next piece of the answer's text (never empty).
    fn text(&self, piece: &str);

    /// The tokens the call used, once a complete answer says (not every
    /// provider does).
    fn usage(&self, _usage: Usage) {}

    /// The next piece of a tool call the answer makes.
    fn tool(&self, _piece: &ToolPiece) {}
}

/// No observer: [`crate::Adapter::call`].
impl Observer for () {
    fn text(&self, _piece: &str) {}
}
