//! AWS Bedrock runtime: the exception name (`x-amzn-ErrorType`, `__type`, a stream's
//! exception event, or botocore's `An error occurred (Name)`) and `{"message"}`.
//! Source: <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html>.

use policy::SemanticCode::*;

use super::{Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    // The operation is not this service's: the setup, not the request.
    rule("bedrock.operation_not_recognized", ProviderMisconfigured).text(&["operation is not recognized"]),
    rule("bedrock.tokens_per_day", QuotaExhausted).text(&["too many tokens per day"]),
    rule("bedrock.no_model_access", ModelUnavailable).text(&["have access to the model with the specified model id"]),
    rule("bedrock.model_access_denied", ModelUnavailable).text(&["model access is denied"]),
    rule("bedrock.invalid_model_identifier", ModelUnavailable).text(&["provided model identifier is invalid"]),
    rule("bedrock.on_demand_not_supported", ProviderMisconfigured)
        .text_any(&["on-demand throughput isn", "support on-demand throughput"]),
    rule("bedrock.input_too_long", ContextLengthExceeded).text(&["input is too long"]),
    rule("bedrock.prompt_too_long", ContextLengthExceeded).text(&["prompt is too long"]),
    rule("bedrock.throttling", RateLimited).error_type("ThrottlingException"),
    rule("bedrock.service_unavailable", Overloaded).error_type("ServiceUnavailableException"),
    rule("bedrock.model_not_ready", Overloaded).error_type("ModelNotReadyException"),
    rule("bedrock.model_timeout", Timeout).error_type("ModelTimeoutException"),
    rule("bedrock.internal_server", ServerError).error_type("InternalServerException"),
    rule("bedrock.model_error", ServerError).error_type("ModelErrorException"),
    rule("bedrock.model_stream_error", ServerError).error_type("ModelStreamErrorException"),
    rule("bedrock.service_quota_exceeded", QuotaExhausted).error_type("ServiceQuotaExceededException"),
    rule("bedrock.access_denied", AuthFailed).error_type("AccessDeniedException"),
    rule("bedrock.unrecognized_client", AuthFailed).error_type("UnrecognizedClientException"),
    rule("bedrock.expired_token", AuthFailed).error_type("ExpiredTokenException"),
    rule("bedrock.invalid_signature", AuthFailed).error_type("InvalidSignatureException"),
    rule("bedrock.resource_not_found", ModelUnavailable).error_type("ResourceNotFoundException"),
    rule("bedrock.validation", InvalidRequest).error_type("ValidationException"),
    // Exception names printed outside any parsed field: LiteLLM's dump of an event-stream
    // frame (`':exception-type': 'serviceUnavailableException'`), `internalServerException
    // {...}` in a log line. Stream events spell them lowerCamel. A validation exception
    // printed alone says too little ("ValidationException: Operation not allowed" is an
    // account matter): only its parsed type counts.
    rule("bedrock.throttling_text", RateLimited).text(&["throttlingexception"]).general(),
    rule("bedrock.service_unavailable_text", Overloaded).text(&["serviceunavailableexception"]).general(),
    rule("bedrock.internal_server_text", ServerError).text(&["internalserverexception"]).general(),
];
