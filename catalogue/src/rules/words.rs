//! The generic layer: meanings any provider, gateway, SDK or agent tool says in plain
//! words, in English and in Chinese, for errors no rule of the provider's family
//! decides. It is consulted after the family's tables (`catalogue::Catalogue`), and
//! what it decides is `medium` confidence:
//!
//! - when no rule matched, or only a bare status, a fragment saying how the failure
//!   surfaced, or words any wrapper prints (ranks 1 to 3) did;
//! - words that name a cause overrule a bare status of a milder class ("429" with
//!   "your balance is insufficient" is credits; "400" with "the service is
//!   degraded" is overloaded), and a bare status of the same class they name more
//!   precisely ("403" with "model not found");
//! - among its own meanings, a hard one wins over a transient one (waiting on a
//!   throttle cannot refill a balance); an outside meaning beside any other is a
//!   conflict (low confidence: a person decides).
//!
//! Each rule names the few short words its wordings share (the searcher looks for
//! those, and no word may hold another), then the wordings themselves. Rules come in
//! the order they win within a class: the most specific first.

use policy::SemanticCode::*;

use super::{Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    // Hard: money, quotas, plans, keys, models.
    rule("words.credits", InsufficientCredits)
        .says(&["balance", "credit", "recharge", "top up", "top-up", "payment", "billing", "arrear", "overdue",
                "past due", "funds", "subscription", "invoice", "quota", "failure to pay", "good standing", "余额", "欠费", "充值", "到期", "额度不足"], &[
            "insufficient balance", "insufficient account balance", "insufficient_balance", "balance is insufficient",
            "balance is not enough", "not enough balance", "balance is too low", "balance too low", "low balance",
            "negative balance", "balance is negative", "balance is empty", "zero balance", "no balance",
            "balance has been exhausted", "balance exhausted", "balance has run out",
            "not_enough_balance", "balance_not_enough", "low_balance", "balance not enough",
            "out of credit", "no credits left", "no credit left", "no credits remaining", "no remaining credit",
            "have no credit", "has no credit", "no credits available", "insufficient credit", "not enough credit",
            "credit balance", "free credits", "purchase credits", "buy credits", "doesn't have any credits",
            "does not have any credits", "don't have any credits", "do not have any credits", "without credits",
            "credits exhausted", "credits have been exhausted", "credits are exhausted", "ran out of credit",
            "run out of credit", "purchase more credit", "buy more credit", "add more credit", "add credit",
            "credit limit", "credits have run out",
            "recharge", "top up", "top-up",
            "payment required", "payment_required", "payment is required", "requires payment", 
            "payment overdue", "payment failed", "no payment method", "add a payment method to continue",
            "update your payment", "outstanding invoice",
            "unpaid invoice", "overdue invoice", "invoice is overdue", "past invoices", "failure to pay", "good standing",
            "credits have been used up", "credit has been used up", "credits used up", "used up your credits",
            "used all your credits",
            "quota is not enough", "quota not enough", "not enough quota", "remain quota", "remaining quota is",
            "subscription has expired", "subscription expired", "subscription is inactive",
            "subscription has been canceled", "subscription has been cancelled",
            "billing hard limit", "billing details", "billing issue", "billing limit", "billing account",
            "billing is not enabled", "billing not enabled", "billing has been disabled",
            "arrear", "overdue", "past due", "insufficient funds", "insufficient_funds",
            "余额不足", "余额已用完", "欠费", "充值", "套餐已到期", "已到期", "额度不足",
        ]),
    rule("words.usage_window", UsageLimited)
        .says(&["usage", "plan", "hit your", "reached your", "will reset", "to reset", "hour limit", "weekly",
                "session limit", "上限", "每周"], &[
            "usage limit", "usage window", "usage cap", "plan limit", "plan's limit", "limit for your plan",
            "limits of your plan", "hit your limit", "hit your usage", "reached your limit", "reached your usage",
            "limit will reset", "limit to reset", "hour limit", "weekly", "session limit", "使用上限",
            "用量上限", "每周",
        ]),
    // Google's RESOURCE_EXHAUSTED is its throttle, whatever the words beside it
    // ("You exceeded your current quota, please check your plan and billing
    // details"); a per-day quota is the generic table's, which decides first.
    rule("words.resource_exhausted", RateLimited)
        .text_any(&["resource_exhausted", "resource exhausted", "resource has been exhausted"])
        .outranks(),
    // A quota per minute or per second is throttling, however the words of a quota
    // around it read ("Quota exceeded for quota metric '... requests per minute'").
    rule("words.quota_per_minute", RateLimited)
        .text(&["quota"])
        .says(&["requests per minute", "tokens per minute", "requests per second", "per minute limit",
                "per second limit", "per_minute", "perminute", "per minute", "online_prediction_"], &[
            "requests per minute", "tokens per minute", "requests per second", "per minute limit",
            "per second limit", "per_minute", "perminute", "per minute", "online_prediction_",
        ])
        .outranks(),
    rule("words.quota", QuotaExhausted)
        .says(&["quota", "monthly", "daily", "per day", "per month", "free tier", "free-tier", "included",
                "allowance", "tpd", "rpd", "month", "usage has reached", "today", "tomorrow", "trial", "spend", "inference limit",
                "额度", "配额", "每日", "每月", "今日"], &[
            "quota exceeded", "exceeded your quota", "exceeded quota", "exceeded the quota", "quota has been exceeded",
            "quota is exceeded", "quota exhausted", "quota has been exhausted", "quota is exhausted", "out of quota",
            "quota reached", "reached your quota", "quota limit",
            "monthly limit", "monthly quota", "monthly usage", "monthly spend", "monthly allowance",
            "monthly included", "monthly request", "monthly token", "daily limit", "daily quota", "daily request",
            "daily usage", "daily token", "requests per day", "tokens per day", "calls per day", "credits per day", "per day limit",
            "limit per day", "per day) exceeded", "requests per month", "tokens per month", "per month limit", "free tier", "free-tier",
            "included usage",
            "included requests", "included credits", "allowance", "daily free", "tpd rate limit", "tpd limit",
            "(rpd)", "rpd limit", "calls / month", "calls/month", "requests / month", "requests/month",
            "reached for this month", "limit for this month", "limit for the month", "today's limit", "today's quota", "return tomorrow", "come back tomorrow",
            "try again tomorrow", "until tomorrow", "trial limit", "trial quota", "spend limit",
            "spending limit", "inference limit", "daily rate limit", "quotalimit", "quota_limit_exceeded",
            "call volume quota", "quota will be replenished", "usage has reached the max",
            "额度已用完", "额度已用尽", "额度已耗尽", "超出额度", "超过额度", "配额", "每日", "每月",
            "今日",
        ]),
    rule("words.model_not_found", ModelUnavailable).text(&["model", "not found"]),
    rule("words.deployment_not_found", ModelUnavailable).text(&["deployment", "not found"]),
    rule("words.deployment_does_not_exist", ModelUnavailable).text(&["deployment", "does not exist"]),
    rule("words.model_does_not_exist", ModelUnavailable).text(&["model", "does not exist"]),
    rule("words.model_not_supported", ModelUnavailable).text(&["model", "not supported"]),
    rule("words.model_gone", ModelUnavailable)
        .text(&["model"])
        .says(&["end of life", "retired", "decommission", "deprecat", "removed", "no longer", "disabled",
                "not enabled", "requires a"], &[
            "end of life", "retired", "decommissioned", "deprecated", "was removed", "has been removed",
            "no longer", "disabled", "not enabled", "requires a pro", "requires a paid",
            "requires a subscription",
        ]),
    rule("words.model", ModelUnavailable)
        .says(&["model", "region", "endpoint", "channel", "deprecating", "plan supporting", "模型", "渠道"], &[
            "model_not_found", "no such model", "unknown model", "invalid model", "model is not available",
            "model not available", "model is not enabled", "model not enabled", "model_not_supported",
            "model_not_available", "unsupported model", "model is deprecated", "model has been deprecated",
            "model deprecated", "model was deprecated", "model has been retired", "model is retired",
            "model has been decommissioned", "model was decommissioned", "model is no longer available",
            "model is no longer supported", "no access to model", "not have access to the model",
            "not have access to model", "not have access to this model", "model access denied",
            "modelnotfound", "not found the model", "no models loaded", "failed to load model", "error loading model",
            "could not load model", "unable to load model", "model has not been loaded", "model is not loaded",
            "model not loaded", "no model loaded", "no model is loaded", "non-serverless model", "unable to access model",
            "not a valid model", "invalid model id", "invalid model identifier", "model not exist", "model is unloaded",
            "model unloaded", "dedicated endpoint", "endpoint that does not exist", "invalidendpoint",
            "don't have access to this model", "do not have access to this model", "model name is invalid",
            "not allowed to use publisher model", "not allowed to use this model", "not allowed to use model",
            "no available channel", "in deprecating state", "with a plan supporting model", "无可用渠道",
            "not available in your region", "not supported in your region", "unsupported region",
            "unsupported_country_region_territory", "region is not supported", "region not supported",
            "模型不存在", "模型已下线", "不支持该模型", "无权访问该模型", "无权访问模型", "模型不可用", "模型未找到",
            "不支持的模型", "模型不支持",
        ]),
    // A local server could not load the model: it does not fit in memory. Waiting
    // does not make it fit; another candidate may.
    rule("words.load_failed", ModelUnavailable)
        .says(&["loading", "memory", "allocate", "resources", "runner", "failed to start", "load engine",
                "create model", "failed to load", "load your model", "completed downloading", "load failed",
                "load-error"], &[
            "model loading aborted", "model loading was stopped", "model loading was aborted",
            "insufficient system resources", "not have enough available memory", "not enough available memory",
            "not have enough memory", "unable to allocate backend buffer", "runner exited", "model failed to start",
            "failed to start model", "could not load engine", "failed to create model", "failed to load llama-server",
            "could not properly load your model", "could not load your model", "has not completed downloading",
            // Go's structured log of a model load (Ollama's `msg="Load failed"`): bare
            // "Load failed" is also how Safari words a fetch that failed.
            "msg=\"load failed\"", "received load-error",
        ]),
    rule("words.auth", AuthFailed)
        .says(&["invalid", "incorrect", "expired", "revoked", "unauthori", "authenticat",
                "permission", "access denied", "not authorized", "disabled", "suspended",
                "deactivated", "banned", "restricted", "not valid", "refresh", "not active", "inactive", "user",
                "authoriz", "api keys", "oauth2", "not correct", "certification", "terminated", "violat",
                "credentials validation", "provider's key has", "鉴权", "认证", "无效", "过期", "禁用", "权限", "封禁", "非法",
                "授权", "身份验证"], &[
            // Switchback's own, when a provider's key variable holds what no header can carry.
            "that holds this provider's key has characters",
            "invalid api key", "invalid api-key", "invalid api_key", "invalid_api_key", "invalid key",
            "invalid token", "invalid access token", "invalid authentication", "invalid credential",
            "invalid x-api-key", "invalid bearer", "invalid subscription key", "api key is invalid",
            "api key invalid", "key is invalid", "token is invalid", "api key not valid", "key not valid",
            "key is not valid", "incorrect api key", "key is incorrect", "token has expired", "token expired",
            "expired token", "key has expired", "key expired", "api key expired", "credentials have expired",
            "session expired", "session has expired", "key has been revoked", "key revoked", "token revoked",
            "token has been revoked", "unauthorized", "unauthorised", "unauthenticated", "authentication failed",
            "authentication error", "authentication_error", "authentication fails", "not authenticated",
            "permission denied", "permission_denied", "no permission", "not have permission",
            "insufficient permission", "lacks permission", "access denied", "not authorized",
            "account disabled", "account has been disabled", "account is disabled", "organization has been disabled",
            "organization is disabled", "organization disabled", "organisation has been disabled",
            "key has been disabled", "key is disabled", "account suspended", "account has been suspended",
            "account is suspended", "suspended", "deactivated", "banned", "access restricted",
            "account restricted", "organization restricted", "restricted access",
            "user is disabled", "user has been disabled", "user disabled", "disabled by team", "disabled by your admin",
            "disabled by your organization", "disabled by the administrator", "account is not active",
            "account is inactive", "account inactive", "organization is not active", "organization is inactive",
            "invalid refresh token", "refresh token expired", "refresh token has expired", "refresh token is invalid",
            "refresh token was already used", "refresh_token_reused", "token could not be refreshed",
            "could not be refreshed", "token refresh failed", "failed to refresh token",
            "authorization failed", "authorization required", "api keys are not supported", "token is expired",
            "key is expired", "certification failed", "organization has been restricted",
            "account has been restricted", "access was terminated", "access terminated", "violation of our policies",
            "violating our policies", "credentials validation failed",
            "expected oauth2 access token",
            "鉴权失败", "认证失败", "api key无效", "apikey无效", "令牌无效", "密钥无效", "key无效",
            "已过期", "已被禁用", "账号已禁用", "账户已禁用", "无权限", "没有权限", "权限不足", "封禁", "token非法",
            "令牌非法", "key非法", "密钥非法", "无效的令牌", "无效的api", "无效的 api", "无效的密钥", "无效的key",
            "身份验证失败", "未授权", "未经授权",
        ]),
    rule("words.credentials_missing", CredentialsMissing)
        .says(&["api key", "api_key", "apikey", "api-key", "credential", "logged in", "log in", "login",
                "authorization header", "bearer", "no token", "token is missing", "missing token",
                "token not provided", "token was not provided", "authenticat", "environment variable", "key is set",
                "key is not set", "did not find", "resolve authentication", ".env", "were not found", "provider's key",
                "缺失", "未收到",
                "未提供", "缺少"], &[
            "no api key", "missing api key", "api key is missing", "api key missing", "api key not set",
            "api key is not set", "api key not found", "api key is required", "api key required",
            "api key not provided", "api key was not provided", "didn't provide an api key",
            // Switchback's own, when a provider's key variable is not set on the server.
            "that holds this provider's key is not set", "that holds this provider's key is empty",
            "did not provide an api key", "api_key must be set", "api_key client option must be set",
            "no api_key", "missing api_key", "api_key is required", "apikey is required", "missing apikey",
            "api_key not found", "api_key not set", "api_key is not set", "api key is empty", "api_key is empty",
            "empty api key", "no api key provided", "api key is not configured", "api key not configured",
            "set it as an environment variable", "environment variable is missing",
            "environment variable not set", "add an environment variable", "no key is set",
            "could not resolve authentication method", "is missing from the .env", "credentials were not found",
            "default credentials were not found",
            "did not find openai_api_key", "did not find anthropic_api_key",
            "api-key header is missing", "missing api-key",
            "no credentials", "missing credential", "credentials not found", "could not find credential",
            "unable to locate credential", "could not load credential", "no auth credentials",
            "not logged in", "please log in", "please login", "run /login", "log in again", "login required",
            "authorization header is missing", "missing authorization header", "no authorization header",
            "missing bearer", "no bearer", "no token provided", "token is missing", "missing token",
            "token not provided", "token was not provided", "authentication required", "no authentication",
            "authentication information", "未收到authorization", "未提供api", "未提供 api", "未提供令牌", "缺少api",
            "缺少 api", "缺少authorization", "api_key缺失", "api key缺失", "apikey缺失", "密钥缺失",
        ]),
    rule("words.unsupported_parameter", ProviderMisconfigured)
        .says(&["unsupported", "unrecognized request argument", "unknown parameter", "unknown field", "support",
                "extra", "allowed for this model"], &[
            "unsupported parameter", "is unsupported", "unrecognized request argument", "unknown parameter",
            "unknown field", "unsupported value", "unsupported_value", "does not support tools", "does not support tool",
            "does not support function", "does not support image", "does not support vision",
            "does not support streaming", "does not support system", "does not support the parameter",
            "tools are not supported", "tool use is not supported", "tool calling is not supported",
            "function calling is not supported", "not supported by this model", "not supported for this model",
            "does not support parameter", "extra inputs are not permitted", "extra_forbidden", "argument not supported",
            "is allowed for this model", "is not allowed for this model", "not supported with this model",
        ]),
    // The wrong API or endpoint for what was asked: an address, not a retry, fixes it.
    rule("words.endpoint", ProviderMisconfigured)
        .says(&["api", "endpoint", "url", "migrate", "route", "please use", "api base", "404", "provider",
                "protocol scheme", "cannot post", "handler found", "openapi method", "instance name", "cors", "action"],
                &[
            "api was removed", "api has been removed", "api is deprecated", "api has been deprecated",
            "endpoint was removed", "endpoint has been removed", "endpoint is deprecated", "endpoint has been deprecated",
            "endpoint is no longer", "api is no longer", "is no longer supported. please use", "please migrate to",
            "endpoint instead", "unsupported endpoint", "unknown endpoint", "invalid endpoint",
            "invalid url", "unknown url", "invalid base url", "no route matched", "no route for",
            "verify your api base", "check your api base", "check your base url", "check the base url",
            "404 page not found", "404 status code (no body)", "404, no body", "invalid provider", "unknown provider",
            "unsupported provider", "provider not found", "unsupported protocol scheme", "cannot post /",
            "no handler found on route", "double check your url", "unsupported openapi method", "instance name not found",
            "blocked by cors policy", "endpoint not found", "specified action is invalid", "invalidaction",
            "could not route to",
        ]),

    // Outside: the request itself.
    rule("words.context_length", ContextLengthExceeded)
        .says(&["context", "too long", "length", "token limit", "max_seq_len", "n_ctx", "inputs", "tokens",
                "maximum number", "token count", "input", "shorten", "上下文", "长度", "过长"], &[
            "context length", "context window", "context_length", "maximum context", "context size",
            "exceeds the context", "exceed the context", "context limit", "prompt is too long",
            "input is too long", "input too long", "maximum length", "max length", "input length",
            "length of prompt", "reduce the length", "max_seq_len", "model token limit", "n_ctx",
            "`inputs` tokens", "`inputs` must have less than", "maximum number of tokens", "token count exceeds",
            "too many input tokens", "input tokens exceed", "exceeds maximum input", "prompt too long",
            "prompt token count", "shorten your prompt",
            "上下文长度", "超过最大长度", "超出最大长度", "输入过长", "超出上下文", "超过上下文", "最大长度",
            "最大上下文",
        ]),
    rule("words.content", ContentFiltered)
        .says(&["content", "moderation", "flagged", "safety", "inappropriate", "sensitive", "polic", "blocked",
                "responsible ai", "敏感", "审核", "违规", "安全", "合规"], &[
            "content policy", "content filter", "content_filter", "content management policy",
            "content moderation", "moderation policy", "moderation system", "failed moderation",
            "was flagged", "flagged by", "flagged as", "safety system", "safety filter", "safety settings",
            "blocked by safety", "inappropriate content", "sensitive content", "sensitive words", "new_sensitive",
            "input sensitive", "output sensitive", "usage policies", "usage policy", "content_policy",
            "policy violation", "responsible ai", "prompt was blocked", "response was blocked", "for safety reasons",
            "不合规",
            "敏感", "内容审核", "审核", "违规", "内容安全", "不安全",
        ]),

    // The caller's input, when no more precise outside meaning is said.
    rule("words.invalid_request", InvalidRequest)
        .says(&["invalid param", "parameter", "json", "deserialize", "tool_result", "formed request", "tool_use",
                "tool call found", "its required", "at least one content", "role must", "enum value", "odd number",
                "is required",
                "tokens you requested",
                "content length", "not allowed to be",
                "格式", "参数"], &[
            "invalid params", "invalid parameter", "parameters specified in the request are not valid",
            "parameter specified in the request", "cannot deserialize",
            "malformed json", "ids were found without tool_result", "improperly formed request",
            "must have at least one content", "role must be", "invalid enum value", "must be an odd number",
            "model is required",
            "maximum tokens you requested",
            "content length must be greater", "are not allowed to be [",
            "malformed request", "parameter check failed", "`tool_use` blocks must be", "tool_use blocks must be",
            "no tool call found for", "without its required", "参数非法", "参数错误", "参数无效", "请求格式有误", "格式错误",
        ]),

    // Transient: capacity, throttling, time, outages, connections.
    rule("words.capacity", Overloaded)
        .says(&["overload", "capacity", "high demand", "heavy load", "busy", "unavailable", "degraded",
                "no instance", "no available", "loading", "saturated", "high traffic", "queue position",
                "current requests", "负载已满", "繁忙", "过载", "饱和",
                "负载", "拥挤", "访问量"], &[
            "overload", "over capacity", "at capacity", "out of capacity", "no capacity", "insufficient capacity",
            "capacity exceeded", "high demand", "heavy load", "server is busy", "service is busy", "server busy",
            "system is busy", "busy", "temporarily unavailable", "service unavailable", "service is unavailable",
            "service is currently unavailable", "server is unavailable", "currently unavailable",
            "unavailable_error", "degraded", "no instances available", "no instance available",
            "no available instances", "no available capacity", "capacity temporarily exceeded",
            "currently loading", "is loading", "loading model", "saturated", "high traffic", "queue position",
            "too many current requests", "负载已满", "繁忙", "过载", "负载过高", "负载较高",
            "拥挤", "饱和",
            "访问量过大",
        ]),
    rule("words.throttle", RateLimited)
        .text_any(&["rate limit", "rate-limit", "ratelimit", "rate_limit", "too many requests", "throttl",
                    "slow down", "requests per minute", "tokens per minute", "requests per second",
                    "per minute limit", "per second limit", "concurrency", "concurrent request",
                    "too many concurrent", "too quickly", "requests per min", "tokens per min", "(rpm)", "(tpm)",
                    "rpm limit", "tpm limit", "request rate", "频繁", "频率超限", "限流", "并发", "速率", "请求过多"])
        .general(),
    rule("words.timeout", Timeout)
        .text_any(&["timed out", "timeout", "time out", "time-out", "timedout", "deadline exceeded", "deadline_exceeded",
                    "did not receive a response", "no response from", "超时"])
        .general(),
    rule("words.outage", ServerError)
        .says(&["internal", "server error", "upstream", "bad gateway", "crash", "server had an error",
                "processing your request", "maintenance", "unexpectedly", "malformed response", "unexpected error",
                "engine loop", "困难", "系统错误", "服务器错误", "内部错误", "服务异常", "系统异常"], &[
            "internal error", "internal server error", "internal_server_error", "internal_error", "server error",
            "upstream error", "upstream request failed", "upstream connect", "upstream service",
            "bad gateway", "has crashed", "crashed", "no healthy upstream", "server had an error",
            "error occurred while processing your request", "under maintenance", "finished unexpectedly",
            "empty or malformed response", "encountered an unexpected error", "engine loop has died",
            "遇到了一些困难",
            "系统错误", "服务器错误", "内部错误", "服务异常", "系统异常",
        ]),
    rule("words.connection", Network)
        .says(&["eof", "socket", "connect", "econn", "epipe", "broken pipe", "fetch failed", "terminated",
                "premature", "network", "stream closed", "stream ended", "stream was reset", "stream interrupted",
                "side closed", "peer closed", "incomplete chunked", "sending request", "reachable", "not running",
                "not be running", "unexpected end", "enotfound", "eai_again", "getaddrinfo", "resolve", "name resolution",
                "name or service", "lookup address", "unreach", "stream error", "protocol error", "decoding response",
                "reaching", "reach", "ended the response", "failed to stream", "not connected", "connecting to",
                "http2_protocol", "failed to fetch", "检查网络",
                "连接"], &[
            "unexpected eof", "eof occurred", "eof while", "socket hang up", "socket closed", "socket was closed",
            "connection error", "connection reset", "connection closed", "connection refused",
            "connection aborted", "connection lost", "connection was closed", "connection was reset",
            "connection terminated", "lost connection", "econnreset", "econnrefused", "econnaborted", "epipe",
            "broken pipe", "fetch failed", "terminated", "premature close", "prematurely", "disconnected",
            "network error", "network is unreachable", "networkerror", "stream closed", "stream ended",
            "stream disconnected", "stream was reset", "stream terminated", "stream interrupted",
            "other side closed", "peer closed", "closed connection", "incomplete chunked", "connection failed",
            "connection attempts failed", "unable to connect", "could not connect", "failed to connect",
            "cannot connect", "trouble connecting", "error sending request", "not reachable", "unreachable",
            "not running", "not be running", "unexpected end of json", "unexpected end of stream",
            "enotfound", "eai_again", "getaddrinfo", "could not resolve host",
            "temporary failure in name resolution", "name or service not known", "failed to lookup address",
            "ehostunreach", "enetunreach", "stream error", "protocol error", "error decoding response body",
            "problem reaching", "trouble reaching", "unable to reach", "could not reach", "failed to reach",
            "ended the response before", "failed to stream", "model not connected", "issue connecting to",
            "http2_protocol_error", "failed to fetch", "检查网络",
            "连接失败", "连接被重置", "连接中断", "连接断开",
        ])
        .general(),

    // An abort because time ran out is a timeout, whatever word of cancelling
    // surfaced it (`AbortError: The operation was aborted due to timeout`).
    rule("words.aborted_by_timeout", Timeout)
        .text_any(&["aborted due to timeout", "aborted because of timeout", "aborted due to a timeout",
                    "request timeout after", "streaming request timeout"])
        .outranks(),

    // Outside: the caller, or something on its side, called the request off.
    rule("words.cancelled", Cancelled)
        .says(&["cancel", "abort"], &[
            "context canceled", "context cancelled", "request was cancelled", "request was canceled",
            "request cancelled", "request canceled", "cancelled by user", "canceled by user", "cancelled by the user",
            "canceled by the user", "request was aborted", "request aborted", "operation was aborted",
            "user aborted", "operation was canceled", "operation was cancelled", "requested to abort", "aborterror: ",
            "bodystreambuffer was aborted",
            "stream aborted",
        ]),
];
