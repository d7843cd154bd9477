//! The compiled catalogue: rules indexed once per family, then matched per evidence.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use memchr::memmem::Finder;
use policy::{Class, Classification, Confidence, SemanticCode};
use smallvec::SmallVec;

use crate::CATALOGUE_VERSION;
use crate::evidence::Evidence;
use crate::facts::{Facts, SEPARATOR};
use crate::family::Family;
use crate::hints::{HintInputs, select_hint};
use crate::output::CatalogueClassification;
use crate::rule_set::{IndexSet, MAX_RULES, RuleIndex};
use crate::rules::{LONG_WAIT_MS, MessageHint, Predicate, Rule, WORDS, is_generic, tables_for};
use crate::scan::{Hit, Scan, WORDINGS, WordingSet};

/// The most message fragments one family's tables may hold (an [`IndexSet`]).
const MAX_NEEDLES: usize = MAX_RULES;

/// The rule id reported when no rule matched.
pub const UNKNOWN_RULE: &str = "unknown";

/// The provider-error catalogue, its rules compiled once.
///
/// ```
/// use catalogue::{Catalogue, Evidence, Transport};
/// let catalogue = Catalogue::shared();
/// assert_eq!(catalogue.version(), "2026.12.4");
/// let verdict = catalogue.classify(&Evidence::new("openai").with_transport(Transport::Tls), 0);
/// assert_eq!(verdict.classification.code, policy::SemanticCode::ProviderMisconfigured);
/// assert_eq!(verdict.rule, "transport.tls");
/// ```
pub struct Catalogue {
    /// One compiled rule set per [`Family`], by [`Family::index`].
    families: Vec<CompiledFamily>,
    /// The generic layer: plain words any provider may use (`rules/words.rs`).
    words: Vec<WordsRule>,
    /// Per wording of the one pass: the generic-layer rules (by index in `words`) that
    /// cannot hold unless it is found, so only the rules an error's wordings name are
    /// checked.
    words_by_trigger: Vec<Vec<u16>>,
}

/// A rule of the generic layer, its words as ids of the one pass (`scan`).
struct WordsRule {
    rule: &'static Rule,
    /// Its fragments, all needed, said together.
    text: Vec<u16>,
    /// Its alternative wordings (one needed), when it has no exact ones.
    any: Vec<u16>,
    /// Its exact wordings, one needed.
    says: Vec<u16>,
    /// The wordings that must not all be denied: its exact ones, else its first
    /// fragment and its alternatives.
    stated: WordingSet,
}

/// The highest rank of a generic-table verdict the generic layer may overrule: a bare
/// status (1), a fragment saying only how the failure surfaced (2), words any wrapper
/// prints (3). A family's own rules, an error type and a code decide.
const WORDS_MAY_OVERRULE: u8 = 3;

/// One family's rules, indexed by what they need.
struct CompiledFamily {
    rules: Vec<&'static Rule>,
    /// Per rule: its [`Rule::rank`].
    ranks: Vec<u8>,
    /// Per rule: the needle ids of its message fragments (all needed).
    rule_needles: Vec<Vec<usize>>,
    /// Per rule: the needle ids of its alternative wordings (one needed).
    rule_any_needles: Vec<Vec<usize>>,
    /// Per rule: its [`Rule::says`] wordings, as ids of the one pass (`scan`).
    wordings: Vec<Vec<u16>>,
    /// Per id of the one pass (`scan`): the needle id of the fragment it is, if any,
    /// and its group (0 for the family's own tables, 1 for the generic table).
    needle_of: Vec<Option<(u16, u8)>>,
    /// Rules by their first needle.
    by_needle: Vec<Vec<u16>>,
    by_type: RuleIndex<String>,
    by_code: RuleIndex<String>,
    by_transport: RuleIndex<&'static str>,
    /// Keyed by the status's big-endian bytes.
    by_status: RuleIndex<[u8; 2]>,
    /// Rules with none of the keys above (quota fragments, predicates).
    always: Vec<u16>,
}

/// Where a fragment occurs, ordered as a leftmost-longest search of its group meets the
/// occurrences: its group, text, start, the longer first, then its needle id.
type FragmentPlace = (u8, usize, usize, Reverse<usize>, u16);

/// Which rules matched and what they decided.
struct Verdict {
    rule: &'static Rule,
    confidence: Confidence,
    conflicting: Vec<&'static str>,
    /// Message hints of the rules that agree with the winner.
    hints: Vec<MessageHint>,
}

static SHARED: LazyLock<Catalogue> = LazyLock::new(Catalogue::compile);

impl Catalogue {
    /// The catalogue, compiled on first use and shared for the life of the process.
    pub fn shared() -> &'static Catalogue {
        &SHARED
    }

    /// The version stored with every classification (`2026.12.4`).
    pub fn version(&self) -> &'static str {
        CATALOGUE_VERSION
    }

    /// Every rule id, for documentation and checks.
    ///
    /// ```
    /// assert!(catalogue::Catalogue::shared().rule_ids().any(|id| id == "gemini.quota_per_day"));
    /// ```
    pub fn rule_ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        let mut ids: Vec<&'static str> = self
            .families
            .iter()
            .flat_map(|family| family.rules.iter().map(|rule| rule.id))
            .chain(self.words.iter().map(|words| words.rule.id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
    }

    /// Compiles every family's tables.
    fn compile() -> Self {
        let families = Family::ALL
            .into_iter()
            .map(|family| CompiledFamily::compile(tables_for(family)))
            .collect();
        let words: Vec<WordsRule> = WORDS.iter().map(WordsRule::compile).collect();
        let mut words_by_trigger = vec![Vec::new(); WORDINGS.len()];
        for (index, rule) in words.iter().enumerate() {
            for id in rule.triggers() {
                words_by_trigger[usize::from(*id)].push(index as u16);
            }
        }
        Self {
            families,
            words,
            words_by_trigger,
        }
    }

    /// Classifies one piece of evidence. `now_ms` (unix milliseconds) stands in for
    /// `observed_at` when the evidence has none. Deterministic: the same evidence and
    /// `now_ms` always give the same result.
    ///
    /// ```
    /// use catalogue::{Catalogue, Evidence};
    /// use policy::{Class, Confidence, SemanticCode};
    /// let evidence = Evidence::new("gemini").with_status(429).with_body(
    ///     r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
    ///         {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
    ///         {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"39s"}]}}"#,
    /// );
    /// let verdict = Catalogue::shared().classify(&evidence, 1_000);
    /// assert_eq!(verdict.classification.code, SemanticCode::QuotaExhausted);
    /// assert_eq!(verdict.classification.class, Class::Hard);
    /// assert_eq!(verdict.classification.retry_after_ms, Some(39_000));
    /// assert_eq!(verdict.rule, "gemini.quota_per_day");
    /// ```
    pub fn classify(&self, evidence: &Evidence, now_ms: i64) -> CatalogueClassification {
        let observed_at_ms = evidence.observed_at_ms.unwrap_or(now_ms);
        let family = Family::from_provider(&evidence.provider);
        let mut facts = Facts::default();
        facts.read_evidence(
            evidence.status,
            evidence.headers.get("x-amzn-errortype"),
            evidence.body.as_deref(),
            evidence.output.as_deref(),
        );
        facts.text_waits = crate::hints::text_waits(&facts);
        facts.stated_wait_ms = crate::hints::stated_wait_ms(&evidence.headers, &facts.text_waits);
        facts.window_rejected = crate::hints::subscription_window_rejected(&evidence.headers);
        let transport = evidence
            .transport
            .as_ref()
            .map(|transport| transport.as_str());

        // OpenRouter: the upstream provider's own error, by that provider's rules.
        if let Some(upstream) = &facts.upstream {
            let nested = upstream.facts.as_ref();
            let compiled = &self.families[upstream.family.index()];
            let status = nested.status.or(facts.status);
            if let Some(verdict) =
                self.with_words(nested, status, compiled.decide(nested, status, None), false)
            {
                let cause = nested
                    .messages
                    .first()
                    .map(|message| match &upstream.provider_name {
                        Some(name) => format!("{name}: {message}"),
                        None => message.to_string(),
                    });
                return self.finish(
                    evidence,
                    upstream.family,
                    nested,
                    verdict,
                    cause,
                    observed_at_ms,
                );
            }
        }

        let compiled = &self.families[family.index()];
        let verdict = compiled.decide(&facts, facts.status, transport);
        match self.with_words(&facts, facts.status, verdict, family.prints_model_words()) {
            Some(verdict) => self.finish(evidence, family, &facts, verdict, None, observed_at_ms),
            None => CatalogueClassification {
                classification: Classification::new(SemanticCode::Unknown, Confidence::High),
                rule: UNKNOWN_RULE,
                catalogue: CATALOGUE_VERSION,
                safe_cause: safe_cause(evidence, &facts),
                observed_at_ms,
                hints_dropped: Vec::new(),
                conflicting_rules: Vec::new(),
            },
        }
    }

    /// The family's verdict, or the generic layer's where the family's says less: no
    /// rule matched; or only a rule of the generic table did, a bare status, a
    /// surfacing fragment or a wrapper's words (ranks up to [`WORDS_MAY_OVERRULE`]),
    /// and the words name a graver class
    /// (transient, then hard, then outside), or the same class more precisely than a
    /// bare status. Words that agree with the family's code leave its verdict as is.
    fn with_words(
        &self,
        facts: &Facts,
        status: Option<u16>,
        family: Option<Verdict>,
        words_in_output: bool,
    ) -> Option<Verdict> {
        if let Some(verdict) = &family
            && !verdict.rule.loose
            && (verdict.confidence == Confidence::Low
                || verdict.rule.rank() > WORDS_MAY_OVERRULE
                || !is_generic(verdict.rule))
        {
            return family;
        }
        let Some(words) = self.read_words(facts, status) else {
            return family;
        };
        let Some(verdict) = family else {
            return Some(words);
        };
        let gravity = |class: Class| match class {
            Class::Transient => 0,
            Class::Hard => 1,
            Class::Outside => 2,
        };
        let (said, read) = (verdict.rule.code, words.rule.code);
        let overrule = if verdict.rule.loose {
            // A loose rule's type is overruled by words of another hard or outside
            // meaning, said by the provider: the output of an agent CLI that prints
            // the conversation also holds the model's own words, which never overrule
            // a provider's error.
            read != said
                && read.class() != Class::Transient
                && !(words_in_output && facts.output.is_some())
        } else if said.class() == read.class() {
            said != read && verdict.rule.rank() == 1
        } else {
            gravity(read.class()) > gravity(said.class())
        };
        Some(if overrule { words } else { verdict })
    }

    /// The generic layer's reading of these facts: only the rules whose words the one
    /// pass found are checked, in table order.
    fn read_words(&self, facts: &Facts, status: Option<u16>) -> Option<Verdict> {
        let mut candidates: SmallVec<[u16; 16]> = SmallVec::new();
        for id in facts.scan().patterns() {
            candidates.extend_from_slice(&self.words_by_trigger[usize::from(id)]);
        }
        candidates.sort_unstable();
        candidates.dedup();
        read_words(&self.words, &candidates, facts, status)
    }

    fn finish(
        &self,
        evidence: &Evidence,
        family: Family,
        facts: &Facts,
        verdict: Verdict,
        cause: Option<String>,
        observed_at_ms: i64,
    ) -> CatalogueClassification {
        let code = verdict.rule.code;
        let limit_code = matches!(
            code,
            SemanticCode::RateLimited | SemanticCode::QuotaExhausted | SemanticCode::UsageLimited
        );
        // The zone the evidence names, else the one the family prints its times in.
        let time_zone = evidence.time_zone.as_deref().or(family.default_time_zone());
        let hint = select_hint(&HintInputs {
            headers: &evidence.headers,
            facts,
            message_hints: &verdict.hints,
            text_waits: code.class() != Class::Outside,
            limit_code,
            observed_at_ms,
            time_zone,
        });
        let mut classification = Classification::new(code, verdict.confidence);
        classification.retry_after_ms = hint.retry_after_ms;
        classification.reset_at_ms = hint.reset_at_ms;
        let safe_cause = match cause {
            Some(cause) => crate::redact::safe_cause(&cause),
            None => safe_cause(evidence, facts),
        };
        CatalogueClassification {
            classification,
            rule: verdict.rule.id,
            catalogue: CATALOGUE_VERSION,
            safe_cause,
            observed_at_ms,
            hints_dropped: hint.dropped,
            conflicting_rules: verdict.conflicting,
        }
    }
}

/// The safe cause of [`cause_text`]. The provider's message or the CLI output is the
/// first of the facts' texts, already white-space-collapsed in their search texts: the
/// cause is cut from that where redaction leaves the text as it is.
fn safe_cause(evidence: &Evidence, facts: &Facts) -> String {
    if let Some(text) = facts.messages.first().map(AsRef::as_ref).or(facts.output) {
        return crate::redact::safe_cause_of_collapsed(text, facts.search_texts().plain(0));
    }
    crate::redact::safe_cause(&cause_text(evidence, facts))
}

/// The text a safe cause is made from: the provider's message, else the CLI output,
/// else what is known about the failure.
fn cause_text<'t>(evidence: &Evidence, facts: &'t Facts) -> Cow<'t, str> {
    if let Some(message) = facts.messages.first() {
        return Cow::Borrowed(message.as_ref());
    }
    if let Some(output) = facts.output {
        return Cow::Borrowed(output);
    }
    if let Some(title) = &facts.html_title {
        let status = facts
            .status
            .map(|status| format!("HTTP {status} "))
            .unwrap_or_default();
        return Cow::Owned(match title {
            Some(title) => format!("{status}HTML error page: {title}"),
            None => format!("{status}HTML error page"),
        });
    }
    if let Some(transport) = &evidence.transport {
        return Cow::Owned(format!("transport failure: {}", transport.as_str()));
    }
    Cow::Owned(
        facts
            .status
            .map(|status| format!("HTTP {status}"))
            .unwrap_or_default(),
    )
}

impl CompiledFamily {
    fn compile(tables: Vec<&'static [Rule]>) -> Self {
        // The generic table comes last; its fragments are a group of their own.
        let generic_rules = tables.last().map_or(0, |table| table.len());
        let rules: Vec<&'static Rule> = tables.into_iter().flatten().collect();
        let generic_from = rules.len() - generic_rules;
        assert!(rules.len() <= MAX_RULES, "too many rules");
        let mut needle_texts: Vec<&'static str> = Vec::new();
        let mut needle_ids = |fragments: &[&'static str]| -> Vec<usize> {
            fragments
                .iter()
                .map(|fragment| {
                    needle_texts
                        .iter()
                        .position(|known| known == fragment)
                        .unwrap_or_else(|| {
                            needle_texts.push(fragment);
                            needle_texts.len() - 1
                        })
                })
                .collect()
        };
        let mut rule_needles: Vec<Vec<usize>> = Vec::with_capacity(rules.len());
        let mut rule_any_needles: Vec<Vec<usize>> = Vec::with_capacity(rules.len());
        let mut family_needles = 0;
        for (index, rule) in rules.iter().enumerate() {
            if index == generic_from {
                family_needles = rule_needles
                    .iter()
                    .chain(&rule_any_needles)
                    .flatten()
                    .max()
                    .map_or(0, |id| id + 1);
            }
            rule_needles.push(needle_ids(rule.text));
            rule_any_needles.push(needle_ids(rule.text_any));
        }
        assert!(
            needle_texts.len() <= MAX_NEEDLES,
            "too many message fragments"
        );
        assert!(
            !needle_texts
                .iter()
                .any(|fragment| fragment.contains(SEPARATOR)),
            "no fragment holds the texts' separator"
        );
        // Fragments are lowercase and found by the one pass over the lowercased texts
        // (`scan`), each as an id of the pass. The family's own fragments and the
        // generic table's are two groups, each read as one leftmost-longest search
        // would report it (`candidates`).
        let mut needle_of = vec![None; WORDINGS.len()];
        for (id, fragment) in needle_texts.iter().enumerate() {
            let group = u8::from(id >= family_needles);
            needle_of[usize::from(WORDINGS.id(fragment))] = Some((id as u16, group));
        }
        let wordings = rules.iter().map(|rule| WORDINGS.ids(rule.says)).collect();
        let mut compiled = Self {
            ranks: rules.iter().map(|rule| rule.rank()).collect(),
            rules,
            rule_needles,
            rule_any_needles,
            wordings,
            needle_of,
            by_needle: vec![Vec::new(); needle_texts.len()],
            by_type: RuleIndex::default(),
            by_code: RuleIndex::default(),
            by_transport: RuleIndex::default(),
            by_status: RuleIndex::default(),
            always: Vec::new(),
        };
        for (index, rule) in compiled.rules.iter().enumerate() {
            let index = index as u16;
            let any = &compiled.rule_any_needles[usize::from(index)];
            if let Some(first) = compiled.rule_needles[usize::from(index)].first() {
                compiled.by_needle[*first].push(index);
            } else if !any.is_empty() {
                // Found by whichever wording occurs.
                for id in any.clone() {
                    compiled.by_needle[id].push(index);
                }
            } else if let Some(code) = rule.error_code {
                compiled.by_code.push(code.to_ascii_lowercase(), index);
            } else if let Some(kind) = rule.error_type {
                compiled.by_type.push(kind.to_ascii_lowercase(), index);
            } else if let Some(transport) = rule.transport {
                compiled.by_transport.push(transport, index);
            } else if let Some(status) = rule.status {
                compiled.by_status.push(status.to_be_bytes(), index);
            } else {
                compiled.always.push(index);
            }
        }
        compiled
    }

    /// The winning rule for these facts, or `None` when no rule matched.
    fn decide(
        &self,
        facts: &Facts,
        status: Option<u16>,
        transport: Option<&str>,
    ) -> Option<Verdict> {
        let (found, candidates) = self.candidates(facts, status, transport);

        // The rules that hold, keeping only those of the highest rank seen so far.
        let mut top_rank = 0;
        let mut top_rules = IndexSet::default();
        for index in candidates.iter() {
            let rank = self.ranks[usize::from(index)];
            if rank < top_rank || !self.holds(usize::from(index), facts, status, transport, &found)
            {
                continue;
            }
            if rank > top_rank {
                top_rank = rank;
                top_rules = IndexSet::default();
            }
            top_rules.insert(index);
        }
        let top = || top_rules.iter().map(|index| self.rules[usize::from(index)]);
        let winner = top().next()?;
        let winner_class: Class = winner.code.class();
        let conflicting: Vec<&'static str> = top()
            .filter(|rule| rule.code.class() != winner_class)
            .map(|rule| rule.id)
            .collect();
        let hints = top()
            .filter(|rule| rule.code == winner.code)
            .flat_map(|rule| rule.hints.iter().copied())
            .fold(Vec::new(), |mut hints, hint| {
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
                hints
            });
        Some(Verdict {
            rule: winner,
            confidence: if conflicting.is_empty() {
                Confidence::High
            } else {
                Confidence::Low
            },
            conflicting,
            hints,
        })
    }

    /// The fragments found in the facts' texts, and the rules whose index key is
    /// present (their other conditions are checked after).
    fn candidates(
        &self,
        facts: &Facts,
        status: Option<u16>,
        transport: Option<&str>,
    ) -> (IndexSet, IndexSet) {
        let mut found = IndexSet::default();
        // A family's own fragments and the generic table's are read apart, so they
        // never hide one another ("too many requests per day" is a generic rate-limit
        // wording over a family's per-day rule). Within one group the fragments found
        // are those a leftmost-longest search of the texts joined reports: the longest
        // that starts first, then the next that starts after it ends. A fragment inside
        // a longer one of the same group would be hidden, and a test refuses those
        // (`no_fragment_hides_another`); two fragments that overlap end to start
        // ("free-models-per-day" and "day limit") are found apart but not run together.
        // No fragment holds the texts' separator, so each text's matches are its own.
        let mut fragments: SmallVec<[FragmentPlace; 8]> = facts
            .scan()
            .all_hits()
            .iter()
            .filter_map(|hit| {
                let (needle, group) = self.needle_of[usize::from(hit.pattern)]?;
                Some((group, hit.text, hit.start, Reverse(hit.end), needle))
            })
            .collect();
        fragments.sort_unstable();
        // The end of the last fragment reported in the group, as (group, text, offset).
        let mut reported_to = (0, 0, 0);
        for &(group, text, start, Reverse(end), needle) in &fragments {
            if (group, text, start) < reported_to {
                continue;
            }
            reported_to = (group, text, end);
            found.insert(needle);
        }
        // Candidates: rules whose index key is present. Their other conditions are
        // checked after.
        let mut candidates = IndexSet::default();
        for id in found.iter() {
            candidates.extend(&self.by_needle[usize::from(id)]);
        }
        let mut key = [0_u8; 64];
        for kind in facts.types.iter() {
            if let Some(rules) = lowercase_key(kind, &mut key).and_then(|key| self.by_type.get(key))
            {
                candidates.extend(rules);
            }
        }
        for code in facts.codes.iter() {
            if let Some(rules) = lowercase_key(code, &mut key).and_then(|key| self.by_code.get(key))
            {
                candidates.extend(rules);
            }
        }
        if let Some(rules) = transport.and_then(|name| self.by_transport.get(name.as_bytes())) {
            candidates.extend(rules);
        }
        if let Some(rules) = status.and_then(|status| self.by_status.get(&status.to_be_bytes())) {
            candidates.extend(rules);
        }
        candidates.extend(&self.always);
        (found, candidates)
    }

    /// Whether every condition of rule `index` holds.
    fn holds(
        &self,
        index: usize,
        facts: &Facts,
        status: Option<u16>,
        transport: Option<&str>,
        found: &IndexSet,
    ) -> bool {
        // Cheapest conditions first; each one that fails ends the check.
        let rule = self.rules[index];
        rule.status.is_none_or(|needed| status == Some(needed))
            // Words any wrapper may print name a passing cause only where a passing
            // cause can be: no status, a stream, a 429 or a 5xx. A 400 "Too many
            // requests in batch" is the caller's mistake.
            && may_pass(rule, status)
            && rule
                .transport
                .is_none_or(|needed| transport == Some(needed))
            && self.rule_needles[index]
                .iter()
                .all(|id| found.contains(*id))
            && (self.rule_any_needles[index].is_empty()
                || self.rule_any_needles[index]
                    .iter()
                    .any(|id| found.contains(*id)))
            && (self.wordings[index].is_empty() || facts.scan().any(&self.wordings[index]))
            && rule.error_type.is_none_or(|needed| {
                facts
                    .types
                    .iter()
                    .any(|kind| kind.eq_ignore_ascii_case(needed))
            })
            && rule.error_code.is_none_or(|needed| {
                facts
                    .codes
                    .iter()
                    .any(|code| code.eq_ignore_ascii_case(needed))
            })
            && rule.quota.is_none_or(|needed| {
                memchr::memmem::find(facts.quota.as_bytes(), needed.as_bytes()).is_some()
            })
            && rule.predicate.is_none_or(|predicate| match predicate {
                Predicate::RequestedOverLimit => facts
                    .lowercase_texts()
                    .any(requested_over_limit),
                Predicate::LongWaitOnQuota => {
                    facts
                        .stated_wait_ms
                        .is_some_and(|wait| wait >= LONG_WAIT_MS)
                        && facts
                            .lowercase_texts()
                            .any(|lower| QUOTA_WORDS.is_match(lower))
                }
                Predicate::WindowRejected => facts.window_rejected,
                Predicate::NoResponse => status.is_none(),
            })
    }
}

/// Whether a [`Rule::general`] rule's words may name the cause at this status: only
/// where a passing cause can be (no status, a stream, a 429 or a 5xx). A 400 "Too many
/// requests in batch" is the caller's mistake.
fn may_pass(rule: &Rule, status: Option<u16>) -> bool {
    !rule.is_general() || status.is_none_or(|status| matches!(status, 200 | 429 | 500..=599))
}

/// The generic layer's reading (`rules/words.rs`): of the meanings that hold, in table
/// order, a hard one before a transient one; an outside one beside another class is a
/// conflict (low confidence), else what it means at medium confidence.
fn read_words(
    words: &[WordsRule],
    candidates: &[u16],
    facts: &Facts,
    status: Option<u16>,
) -> Option<Verdict> {
    let scan = facts.scan();
    let mut holding: SmallVec<[&'static Rule; 4]> = candidates
        .iter()
        .map(|index| &words[usize::from(*index)])
        .filter(|words| words.holds(facts, scan, status))
        .map(|words| words.rule)
        .collect();
    // A meaning marked to outrank (a quota per minute is throttling) decides.
    if holding.iter().any(|rule| rule.outranks) {
        holding.retain(|rule| rule.outranks);
    }
    let first_of = |class: Class| holding.iter().find(|rule| rule.code.class() == class);
    let outside = first_of(Class::Outside);
    let winner = outside
        .or_else(|| first_of(Class::Hard))
        .or_else(|| first_of(Class::Transient))?;
    let conflicting: Vec<&'static str> = match outside {
        Some(_) => holding
            .iter()
            .filter(|rule| rule.code.class() != Class::Outside)
            .map(|rule| rule.id)
            .collect(),
        None => Vec::new(),
    };
    Some(Verdict {
        rule: winner,
        confidence: if conflicting.is_empty() {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        conflicting,
        hints: Vec::new(),
    })
}

impl WordsRule {
    fn compile(rule: &'static Rule) -> Self {
        assert!(
            crate::scan::words_only(rule),
            "{}: a generic-layer rule names only words",
            rule.id
        );
        let text = WORDINGS.ids(rule.text);
        let says = WORDINGS.ids(rule.says);
        // With exact wordings, `text_any` holds the short words they share: a wording
        // found holds one of them.
        let any = if says.is_empty() {
            WORDINGS.ids(rule.text_any)
        } else {
            Vec::new()
        };
        let stated = if says.is_empty() {
            WordingSet::of(&text.iter().take(1).chain(&any).copied().collect::<Vec<_>>())
        } else {
            WordingSet::of(&says)
        };
        Self {
            rule,
            text,
            any,
            says,
            stated,
        }
    }

    /// The wordings without which it cannot hold: its first fragment, else each of
    /// its exact wordings, else each of its alternatives.
    fn triggers(&self) -> &[u16] {
        if let Some(first) = self.text.first() {
            std::slice::from_ref(first)
        } else if !self.says.is_empty() {
            &self.says
        } else {
            assert!(
                !self.any.is_empty(),
                "{}: a generic-layer rule names words",
                self.rule.id
            );
            &self.any
        }
    }

    /// Whether its words are found, said together, and not all denied.
    fn holds(&self, facts: &Facts, scan: &Scan, status: Option<u16>) -> bool {
        may_pass(self.rule, status)
            && self.text.iter().all(|id| scan.found(*id))
            && (self.any.is_empty() || scan.any(&self.any))
            && (self.says.is_empty() || scan.any(&self.says))
            && self.said_together(facts, scan)
            && !self.denied(facts, scan)
    }

    /// Whether every wording that states its meaning is denied ("not your usage
    /// limit"): the words name what the failure is not.
    fn denied(&self, facts: &Facts, scan: &Scan) -> bool {
        let texts = facts.search_texts();
        let is_denied = |hit: &&Hit| denial_before(texts.lower(hit.text), hit.start);
        // Where no stated wording has a denial before it (nearly always), the meaning
        // is not denied, and the places need not be gathered.
        if !scan.hits_of(&self.stated).any(|hit| is_denied(&hit)) {
            return false;
        }
        let stated: SmallVec<[&Hit; 8]> = scan.hits_of(&self.stated).collect();
        let denied: SmallVec<[&Hit; 8]> = stated.iter().copied().filter(is_denied).collect();
        // A wording inside or across a denied one is denied with it ("not reached
        // your usage limit": "usage limit" is not said on its own).
        !stated.is_empty()
            && stated.iter().all(|hit| {
                denied.iter().any(|denial| {
                    denial.text == hit.text && denial.start < hit.end && hit.start < denial.end
                })
            })
    }

    /// For a rule with `text` fragments (`"model"`, `"not found"`): whether one text
    /// says them together, the rest (and one of its wordings) within [`NEAR`] bytes
    /// after the first ("Model gpt-x not found", not "command not found" in one line
    /// and "model: gpt-x" in another).
    fn said_together(&self, facts: &Facts, scan: &Scan) -> bool {
        let Some((first, rest)) = self.text.split_first() else {
            return true;
        };
        let texts = facts.search_texts();
        scan.hits(*first).iter().any(|hit| {
            let lower = texts.lower(hit.text);
            let mut end = (hit.end + NEAR).min(lower.len());
            while !lower.is_char_boundary(end) {
                end -= 1;
            }
            // Occurrences of one wording in one text share a length: the first at or
            // after `hit` ends first.
            let near = |id: &u16| {
                scan.first_from(*id, hit.text, hit.start)
                    .is_some_and(|other| other.end <= end)
            };
            rest.iter().all(near) && (self.says.is_empty() || self.says.iter().any(near))
        })
    }
}

/// How far after a generic rule's first fragment the rest must follow, in bytes.
const NEAR: usize = 80;

/// Whether the words just before `at` in `lower` deny what follows: "not ", "not
/// your ", "not a ", "isn't ".
fn denial_before(lower: &str, at: usize) -> bool {
    let Some(before) = lower.get(..at) else {
        return false;
    };
    let before = before.trim_end();
    ["not", "not your", "not a", "isn't", "isn\u{2019}t"]
        .iter()
        .any(|denial| {
            before
                .strip_suffix(denial)
                .is_some_and(|rest| !rest.chars().next_back().is_some_and(char::is_alphanumeric))
        })
}

/// Words about a quota, lowercase: with a wait of an hour or more, a quota rather than
/// throttling ([`Predicate::LongWaitOnQuota`]).
static QUOTA_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::new([
        "quota",
        "per day",
        "daily",
        "pricing tier",
        "usage tier",
        "billing",
        "per month",
        "monthly",
    ])
    .expect("quota words are valid patterns")
});

/// `text` lowercased into `buffer`, when it is short ASCII.
fn lowercase_key<'b>(text: &str, buffer: &'b mut [u8; 64]) -> Option<&'b [u8]> {
    let bytes = text.as_bytes();
    if bytes.len() > buffer.len() || !text.is_ascii() {
        return None;
    }
    for (slot, byte) in buffer.iter_mut().zip(bytes) {
        *slot = byte.to_ascii_lowercase();
    }
    Some(&buffer[..bytes.len()])
}

/// `... limit 10000, requested 15000 ...` (in lowercased text): one request asks for
/// more than the limit.
fn requested_over_limit(text: &str) -> bool {
    // Searchers built once. Neither word can overlap itself, so the non-overlapping
    // occurrences a searcher reports are all of them.
    static LIMIT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("limit"));
    static REQUESTED: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("requested"));
    let text = crate::redact::prefix(text, 4096);
    let limit = number_after(text, &LIMIT);
    let requested = number_after(text, &REQUESTED);
    matches!((limit, requested), (Some(limit), Some(requested)) if requested > limit)
}

/// The first number that directly follows `word` (after `:`, spaces), commas allowed.
fn number_after(text: &str, word: &Finder) -> Option<u64> {
    for start in word.find_iter(text.as_bytes()) {
        let rest = text[start + word.needle().len()..].trim_start_matches([' ', ':']);
        let mut number: u64 = 0;
        let mut digits = 0;
        for byte in rest.bytes() {
            match byte {
                b'0'..=b'9' => {
                    number = number
                        .saturating_mul(10)
                        .saturating_add(u64::from(byte - b'0'));
                    digits += 1;
                }
                b',' if digits > 0 => {}
                _ => break,
            }
        }
        if digits > 0 {
            return Some(number);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use policy::{Confidence, SemanticCode};

    use super::requested_over_limit;
    use crate::Evidence;
    use crate::family::Family;

    /// A failure in the middle of an answer is read by its error, not by the text the
    /// model had sent: a 200 stream whose deltas break off into an error event, and CLI
    /// output whose partial answer ends in a broken connection.
    #[test]
    fn a_failure_mid_answer_is_read_by_its_error() {
        let stream = concat!(
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"The quota of the first\"}}\n\n",
            "event: error\n",
            "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n",
        );
        let verdict = crate::classify(
            &Evidence::new("anthropic")
                .with_status(200)
                .with_body(stream),
            0,
        );
        assert_eq!(verdict.classification.code, SemanticCode::Overloaded);
        assert_eq!(verdict.rule, "anthropic.overloaded_error");

        // The model's own prose, about quotas, billing and models, then the break.
        let output = concat!(
            "Here is the plan for this month. First, the billing module reads each ",
            "customer's balance and quota; then the model picks a plan. The daily ",
            "report runs per day, and retries wait a moment.\nError: unexpected EOF",
        );
        let verdict = crate::classify(&Evidence::new("other").with_output(output), 0);
        assert_eq!(verdict.classification.code, SemanticCode::Network);
        assert_eq!(verdict.classification.confidence, Confidence::Medium);
    }

    /// A wording inside or across a denied one is denied with it.
    #[test]
    fn a_denied_wording_denies_the_wordings_it_holds() {
        let verdict = crate::classify(
            &Evidence::new("other").with_status(429).with_body(
                r#"{"error":{"message":"Too many requests: you have not reached your usage limit, slow down"}}"#,
            ),
            0,
        );
        assert_eq!(verdict.classification.code, SemanticCode::RateLimited);
    }

    /// A loose `invalid_request_error` gives way to words of another hard or outside
    /// meaning from the provider, never to passing words, never to the same code, and
    /// never to the model's words in an agent CLI's output.
    #[test]
    fn a_loose_type_gives_way_only_to_a_graver_provider_meaning() {
        let body = |message: &str| {
            format!(r#"{{"error":{{"type":"invalid_request_error","message":"{message}"}}}}"#)
        };
        let read = |provider: &str, status: u16, message: &str| {
            crate::classify(
                &Evidence::new(provider)
                    .with_status(status)
                    .with_body(&body(message)),
                0,
            )
        };
        let verdict = read("deepseek", 400, "Model Not Exist");
        assert_eq!(verdict.classification.code, SemanticCode::ModelUnavailable);
        assert_eq!(verdict.classification.confidence, Confidence::Medium);
        let verdict = read("openai", 400, "Request timed out while reading the body");
        assert_eq!(verdict.rule, "openai.type.invalid_request_error");
        let verdict = read("openai", 400, "Invalid params: messages must alternate");
        assert_eq!(verdict.rule, "openai.type.invalid_request_error");
        assert_eq!(verdict.classification.confidence, Confidence::High);
        // Claude Code's stream: the API's 400, and the model's own words before it.
        let output = concat!(
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",",
            "\"text\":\"The model was not found in the cache, so I rebuilt it.\"}]}}\n",
            "API Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",",
            "\"message\":\"messages.1: unexpected role\"}}",
        );
        let verdict = crate::classify(&Evidence::new("claude_code").with_output(output), 0);
        assert_eq!(verdict.classification.code, SemanticCode::InvalidRequest);
    }

    /// Bodies with more texts than a small index holds, and shapes that only look like
    /// errors, read without a panic and without inventing a failure.
    #[test]
    fn many_texts_and_error_lookalikes_read_safely() {
        let items = vec![r#"{"code":3036,"message":"x"}"#; 70_000].join(",");
        let body = format!(r#"{{"success":false,"errors":[{items}]}}"#);
        let output = "a wait, not a rate limit; xx rate limit";
        let evidence = Evidence::new("cloudflare")
            .with_status(400)
            .with_body(&body)
            .with_output(output);
        let _ = crate::classify(&evidence, 0);
        // MiniMax's success status and a document with a title are not errors.
        for body in [
            r#"{"base_resp":{"status_code":0,"status_msg":"success"}}"#,
            r#"{"title":"Quota planning","items":[]}"#,
        ] {
            let verdict =
                crate::classify(&Evidence::new("other").with_status(200).with_body(body), 0);
            assert_eq!(verdict.classification.code, SemanticCode::Unknown, "{body}");
        }
    }

    /// Equally specific rules of different classes: low confidence, and the others named.
    #[test]
    fn rules_of_different_classes_give_low_confidence() {
        let evidence = Evidence::new("claude_code")
            .with_output("Invalid API key · Please run /login\nAPI Error: Request timed out.");
        let verdict = crate::classify(&evidence, 0);
        assert_eq!(verdict.classification.confidence, Confidence::Low);
        assert_eq!(verdict.classification.code, SemanticCode::AuthFailed);
        assert_eq!(
            verdict.conflicting_rules,
            vec!["claude_code.request_timed_out"]
        );
        let json = serde_json::to_value(&verdict).unwrap();
        assert_eq!(json["confidence"], "low");
        assert_eq!(
            json["conflicting_rules"][0],
            "claude_code.request_timed_out"
        );
    }

    /// A more specific rule refines a broader one of another class: no conflict.
    #[test]
    fn a_more_specific_rule_is_not_a_conflict() {
        let evidence = Evidence::new("anthropic").with_status(400).with_body(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}"#,
        );
        let verdict = crate::classify(&evidence, 0);
        assert_eq!(verdict.classification.confidence, Confidence::High);
        assert_eq!(
            verdict.classification.code,
            SemanticCode::InsufficientCredits
        );
        assert!(verdict.conflicting_rules.is_empty());
    }

    /// Words out of place: the model's own text in CLI output, a 4xx that happens to say
    /// "too many requests", a certificate error inside a provider's own 5xx, "frontier"
    /// beside a long wait. None of them may turn an error transient or hard by accident.
    /// The generic layer reads a model's failure only where the words are said
    /// together, skips what a message denies, and lets no hard word beat Google's
    /// throttle or a quota per minute.
    #[test]
    fn the_generic_layer_reads_words_together_and_not_denied() {
        let cases = [
            (
                "(node:1) DeprecationWarning: The `punycode` module is deprecated.\nError: The model is overloaded, try again later",
                SemanticCode::Overloaded,
            ),
            (
                "bash: rg: command not found\nmodel: gpt-5\nsocket hang up",
                SemanticCode::Network,
            ),
            (
                "The model `gpt-9` does not exist or you do not have access to it.",
                SemanticCode::ModelUnavailable,
            ),
            (
                "Rate limited by the server (not a usage limit), retry in 20s",
                SemanticCode::RateLimited,
            ),
            (
                "429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan and billing details.",
                SemanticCode::RateLimited,
            ),
            (
                "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model",
                SemanticCode::RateLimited,
            ),
            (
                "Your account balance is insufficient, please recharge. Rate limit: 3/min",
                SemanticCode::InsufficientCredits,
            ),
        ];
        for (output, code) in cases {
            let verdict = crate::classify(&Evidence::new("other").with_output(output), 0);
            assert_eq!(
                verdict.classification.code, code,
                "{output} by {}",
                verdict.rule
            );
        }
    }

    /// Switchback's own failures when a provider's key variable is not set (or set
    /// to nothing) on the server say the key is missing, and when it holds what no
    /// header can carry, that the key is bad (`providers/src/key.rs`), for every
    /// family: the hard section decides, nobody is asked.
    #[test]
    fn a_key_variable_not_set_on_the_server_is_a_missing_key() {
        let cases = [
            (
                "the environment variable ANTHROPIC_API_KEY that holds this provider's key is not set",
                SemanticCode::CredentialsMissing,
            ),
            (
                "the environment variable OPENAI_API_KEY that holds this provider's key is empty",
                SemanticCode::CredentialsMissing,
            ),
            (
                "the environment variable OPENAI_API_KEY that holds this provider's key has characters an HTTP header cannot carry",
                SemanticCode::AuthFailed,
            ),
        ];
        for family in Family::ALL {
            for (text, code) in cases {
                let verdict = crate::classify(&Evidence::new(family.as_str()).with_body(text), 0);
                assert_eq!(
                    verdict.classification.code, code,
                    "{family:?}: {text} by {}",
                    verdict.rule
                );
            }
        }
    }

    /// Safari words a fetch that failed "Load failed": that is no model's load.
    #[test]
    fn a_browsers_load_failed_is_not_a_model_that_failed_to_load() {
        let verdict = crate::classify(
            &Evidence::new("openai_compatible").with_output("TypeError: Load failed"),
            0,
        );
        assert_ne!(verdict.classification.code, SemanticCode::ModelUnavailable);
    }

    #[test]
    fn words_out_of_place_do_not_decide() {
        let output = |family: &str, text: &str| Evidence::new(family).with_output(text);
        let body = |family: &str, status: u16, text: &str| {
            Evidence::new(family).with_status(status).with_body(text)
        };
        let cases: [(Evidence, SemanticCode, Option<u64>); 9] = [
            // The model planned a wait; the CLI then lost its connection.
            (
                output("claude_code", "I will try again in 3 hours after the daily backup.\nAPI Error (Connection error.)"),
                SemanticCode::Network,
                None,
            ),
            (
                output("claude_code", "Let me retry in 10 minutes.\nAPI Error (Connection error.)"),
                SemanticCode::Network,
                None,
            ),
            // The provider's own wait, after the words naming the failure.
            (
                output("codex", "■ stream disconnected before completion: Rate limit reached for gpt-5. Please try again\n    in 12s."),
                SemanticCode::RateLimited,
                Some(12_000),
            ),
            (
                body("openai", 400, r#"{"error":{"message":"Too many requests in batch: at most 50 allowed.","type":"invalid_request_error"}}"#),
                SemanticCode::InvalidRequest,
                None,
            ),
            (
                body("openai", 403, r#"{"error":{"message":"Access paused after a high load of abuse reports.","type":"permission_error"}}"#),
                SemanticCode::AuthFailed,
                None,
            ),
            (
                body("openai", 400, r#"{"error":{"message":"The vector store is at capacity.","type":"invalid_request_error"}}"#),
                SemanticCode::InvalidRequest,
                None,
            ),
            // Envoy inside the provider failed its own TLS: the provider's outage.
            (
                body("openai", 503, "upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: TLS error: 268435581:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED"),
                SemanticCode::ServerError,
                None,
            ),
            (
                Evidence::new("openai").with_status(503).with_header("retry-after", "3600").with_body(
                    r#"{"error":{"message":"Our frontier models are busy. Please try later.","type":"server_error"}}"#,
                ),
                SemanticCode::ServerError,
                Some(3_600_000),
            ),
            // The plan's window, even when it says "daily" and the wait is long.
            (
                output("claude_code", "Claude usage limit reached. Your daily limit resets in 5 hours."),
                SemanticCode::UsageLimited,
                Some(18_000_000),
            ),
        ];
        for (evidence, code, retry_after_ms) in cases {
            let verdict = crate::classify(&evidence, 0);
            assert_eq!(
                (
                    verdict.classification.code,
                    verdict.classification.retry_after_ms
                ),
                (code, retry_after_ms),
                "{evidence:?} by {}",
                verdict.rule
            );
        }
    }

    /// A family's fragments are read as a leftmost-longest search of each group would
    /// report them (`candidates`): a fragment inside another of the same group (a
    /// family's own tables, or the generic table) is hidden where the longer one
    /// occurs, and a fragment in both groups would be read in the family's group only.
    /// Both are refused. (The generic layer's words and every `says` wording are read
    /// from every occurrence the one pass (`scan`) reports.)
    #[test]
    fn no_fragment_hides_another() {
        let fragments = |tables: &[&'static [crate::rules::Rule]]| -> Vec<&'static str> {
            let mut fragments: Vec<&'static str> = tables
                .iter()
                .copied()
                .flatten()
                .flat_map(|rule| rule.text.iter().chain(rule.text_any))
                .copied()
                .collect();
            fragments.sort_unstable();
            fragments.dedup();
            fragments
        };
        let mut hidden = std::collections::BTreeSet::new();
        for family in crate::family::Family::ALL {
            let tables = crate::rules::tables_for(family);
            let (generic, own) = tables.split_last().expect("the generic table comes last");
            let own = fragments(own);
            let generic = fragments(std::slice::from_ref(generic));
            for group in [&own, &generic] {
                for short in group {
                    for long in group {
                        if short != long && long.contains(short) {
                            hidden.insert(format!("{family:?}: \"{short}\" is inside \"{long}\""));
                        }
                    }
                }
            }
            for shared in own.iter().filter(|fragment| generic.contains(fragment)) {
                hidden.insert(format!("{family:?}: \"{shared}\" is in both groups"));
            }
        }
        assert!(hidden.is_empty(), "{hidden:#?}");
    }

    /// The fragments a family reads from the one pass are those a leftmost-longest
    /// search of each of its two groups (its own tables, the generic table) reports:
    /// over every two of its fragments run together, overlapping where one ends as the
    /// other starts ("free-models-per-day limit"), and apart in two texts.
    #[test]
    fn fragments_from_the_one_pass_are_a_leftmost_longest_search() {
        use aho_corasick::{AhoCorasickBuilder, MatchKind};
        use std::borrow::Cow;

        use crate::facts::Facts;
        use crate::scan::WORDINGS;

        let catalogue = super::Catalogue::shared();
        for family in Family::ALL {
            let compiled = &catalogue.families[family.index()];
            let mut groups: [Vec<(&'static str, u16)>; 2] = [Vec::new(), Vec::new()];
            let mut fragments = Vec::new();
            for rule in crate::rules::tables_for(family).into_iter().flatten() {
                for fragment in rule.text.iter().chain(rule.text_any) {
                    let Some((needle, group)) =
                        compiled.needle_of[usize::from(WORDINGS.id(fragment))]
                    else {
                        panic!("{family:?}: {fragment} has no needle");
                    };
                    if !fragments.contains(fragment) {
                        fragments.push(*fragment);
                        groups[usize::from(group)].push((*fragment, needle));
                    }
                }
            }
            let searchers = groups.each_ref().map(|group| {
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(group.iter().map(|(fragment, _)| fragment))
                    .unwrap()
            });
            let mut cases: Vec<Vec<String>> = Vec::new();
            for first in &fragments {
                for second in &fragments {
                    cases.push(vec![format!("x {first}{second} y")]);
                    cases.push(vec![(*first).to_owned(), (*second).to_owned()]);
                    for shared in 1..first.len().min(second.len()) {
                        if first.is_char_boundary(first.len() - shared)
                            && second.is_char_boundary(shared)
                            && first[first.len() - shared..] == second[..shared]
                        {
                            cases.push(vec![format!("{first}{}", &second[shared..])]);
                        }
                    }
                }
            }
            for texts in cases {
                let mut facts = Facts::default();
                facts
                    .messages
                    .extend(texts.iter().map(|text| Cow::Borrowed(text.as_str())));
                let (found, _) = compiled.candidates(&facts, None, None);
                let mut expected = crate::rule_set::IndexSet::default();
                let joined = facts.search_texts().joined();
                for (searcher, group) in searchers.iter().zip(&groups) {
                    for hit in searcher.find_iter(joined) {
                        expected.insert(group[hit.pattern().as_usize()].1);
                    }
                }
                assert_eq!(found, expected, "{family:?}: {texts:?}");
            }
        }
    }

    #[test]
    fn requested_over_limit_reads_the_numbers() {
        let cases = [
            (
                "Request too large for gpt-4 in organization org-x on tokens per min (TPM): Limit 10000, Requested 15000.",
                true,
            ),
            (
                "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29937, Requested 385.",
                false,
            ),
            ("Limit 1,000,000, Requested 44,975,775", true),
            ("rate limit reached", false),
        ];
        for (text, expected) in cases {
            assert_eq!(
                requested_over_limit(&text.to_ascii_lowercase()),
                expected,
                "{text}"
            );
        }
    }
}
