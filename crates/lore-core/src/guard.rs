//! Sensitive-data guard (SPEC L21): checks every extraction candidate before it is stored and rejects compensation, payment-card, bank-account, national-id, tax and medical-diagnosis details with a loggable reason.
//!
//! The guard is deterministic and hand-written (std only, no regex). All
//! scanning happens on a lowercased `Vec<char>` copy of the input, so it is
//! case-insensitive, never slices a `&str`, and never panics on any input.
//!
//! Checks, in the order they run (the first hit wins):
//!
//! 1. **IBAN** — 2 letters + 2 check digits + 11..=30 alphanumerics (spaces
//!    allowed between groups of 4), ISO 13616 mod-97 == 1, length matching the
//!    country where known (15..=34 otherwise) → [`SensitiveKind::BankAccount`].
//! 2. **Payment card** — 13..=19 digits (single spaces/dashes between groups),
//!    Luhn-valid *and* matching an issuer prefix + length → [`SensitiveKind::PaymentCard`].
//! 3. **US SSN** — `AAA-GG-SSSS` / `AAA GG SSSS` outside the never-issued
//!    ranges → [`SensitiveKind::NationalId`].
//! 4. **ID phrases** — "ssn", "social security", "passport number",
//!    "national insurance", "driver's license"… followed by an id with 6+
//!    digits → [`SensitiveKind::NationalId`].
//! 5. **Bank phrases** — "account number", "routing number", "sort code",
//!    "bank account"… followed by 6+ digits → [`SensitiveKind::BankAccount`].
//! 6. **Tax** — "tax id"/"tin"/"itin" + id, "tax return"/"refund"/"bracket"/…
//!    + a number, or "owes/paid … taxes" + an amount → [`SensitiveKind::TaxDetails`].
//! 7. **Compensation** — pay words (salary, income, wage, pay, bonus, raise,
//!    per hour, …) within 60 chars of an amount in the same sentence
//!    → [`SensitiveKind::Compensation`].
//! 8. **Medical** — "diagnosed with"/"diagnosis of"/"in rehab"/"pregnant"/…
//!    alone, or a condition word (diabetes, depression, adhd, …) with a medical
//!    or personal context word → [`SensitiveKind::MedicalDiagnosis`].
//!
//! Reasons are lowercase, have no trailing period, name what matched and never
//! echo a number: ids keep only their last 4 characters, amounts are not shown.
//!
//! Known limits: keyword lists are English only; "paid $5,000 for the booth"
//! or "raised $2M" are flagged as compensation (conservative); "makes 120k"
//! or "130k base" are missed (no pay word); percentages count only next to
//! salary/income/wage/compensation ("10% raise" passes); bare 4-digit years
//! ("salary 2026") are not amounts; medical detection is keyword based.

use std::fmt;

/// Why a candidate was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SensitiveKind {
    Compensation,
    PaymentCard,
    BankAccount,
    NationalId,
    TaxDetails,
    MedicalDiagnosis,
}

impl fmt::Display for SensitiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SensitiveKind::Compensation => "compensation",
            SensitiveKind::PaymentCard => "payment card",
            SensitiveKind::BankAccount => "bank account",
            SensitiveKind::NationalId => "national id",
            SensitiveKind::TaxDetails => "tax details",
            SensitiveKind::MedicalDiagnosis => "medical diagnosis",
        })
    }
}

/// A rejected candidate: what kind of sensitive data was found and a
/// loggable reason (lowercase, no trailing period, numbers masked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub kind: SensitiveKind,
    pub reason: String,
}

/// Checks one text (a claim value, quote, or task title). Returns the first rejection found.
pub fn check_text(text: &str) -> Option<Rejection> {
    let s = Scan::new(text);
    s.iban()
        .or_else(|| s.card())
        .or_else(|| s.ssn())
        .or_else(|| s.id_phrase())
        .or_else(|| s.bank_phrase())
        .or_else(|| s.tax())
        .or_else(|| s.compensation())
        .or_else(|| s.medical())
}

/// Checks several texts of one candidate (e.g. predicate name, value, quote); returns the first rejection.
///
/// Each text is checked on its own first; then, if there are several, they
/// are checked joined together (" : ", same sentence) so that a fact split
/// across fields — predicate `base_salary`, value `120000` — is still caught.
pub fn check_candidate<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<Rejection> {
    let texts: Vec<&str> = texts.into_iter().collect();
    for t in &texts {
        if let Some(r) = check_text(t) {
            return Some(r);
        }
    }
    if texts.len() > 1 {
        check_text(&texts.join(" : "))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Word lists
// ---------------------------------------------------------------------------

const CURRENCY_SYMBOLS: &[char] = &['$', '€', '£', '¥', '₹', '₩', '₽', '₺', '₪'];

#[rustfmt::skip]
const CURRENCY_WORDS: &[&str] = &[
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "inr", "cny", "sek", "nok", "dkk", "pln",
    "dollar", "dollars", "euro", "euros", "pound", "pounds", "bucks", "quid", "yen",
];

#[rustfmt::skip]
const SCALE_WORDS: &[&str] = &[
    "k", "thousand", "million", "mil", "grand", "billion", "mn", "bn",
];

/// Words right after a number that make it a count or measure, not money.
#[rustfmt::skip]
const UNIT_WORDS: &[&str] = &[
    "ms", "ns", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h",
    "hr", "hrs", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year",
    "years", "yr", "yrs", "am", "pm", "unit", "units", "people", "person", "persons", "user",
    "users", "customer", "customers", "request", "requests", "req", "reqs", "rps", "qps", "item",
    "items", "ticket", "tickets", "issue", "issues", "bug", "bugs", "test", "tests", "point",
    "points", "pts", "story", "stories", "gb", "mb", "kb", "tb", "gib", "mib", "kib", "tib", "x",
    "px", "line", "lines", "file", "files", "commit", "commits", "node", "nodes", "server",
    "servers", "pod", "pods", "core", "cores", "cpu", "cpus", "row", "rows", "record", "records",
    "km", "kg", "engineer", "engineers", "employee", "employees", "device", "devices", "seat",
    "seats", "slide", "slides", "page", "pages", "step", "steps", "times", "event", "events",
    "message", "messages", "call", "calls", "sprint", "sprints", "host", "hosts", "error",
    "errors", "retries", "attempts", "token", "tokens", "chars", "characters", "words", "bytes",
    "bits", "invoices", "meetings", "candidates", "interviews", "vendors",
];

/// How strongly a pay word needs an amount next to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PayNeed {
    /// Any plain number after it ("salary is 85"), a percentage close by
    /// ("salary 10% above band"), or a money-like amount nearby.
    Any,
    /// A money-like amount: currency, k/m suffix, or 4+ integer digits.
    Money,
    /// An amount with a currency ("raised $2k", "$80 per hour").
    Currency,
}

const PAY_WORDS: &[(&str, PayNeed)] = &[
    ("salary", PayNeed::Any),
    ("salaries", PayNeed::Any),
    ("income", PayNeed::Any),
    ("incomes", PayNeed::Any),
    ("wage", PayNeed::Any),
    ("wages", PayNeed::Any),
    ("payslip", PayNeed::Any),
    ("payslips", PayNeed::Any),
    ("paycheck", PayNeed::Any),
    ("paychecks", PayNeed::Any),
    ("paystub", PayNeed::Any),
    ("compensation", PayNeed::Any),
    ("pay", PayNeed::Money),
    ("pays", PayNeed::Money),
    ("paid", PayNeed::Money),
    ("paying", PayNeed::Money),
    ("payroll", PayNeed::Money),
    ("bonus", PayNeed::Money),
    ("bonuses", PayNeed::Money),
    ("earn", PayNeed::Money),
    ("earns", PayNeed::Money),
    ("earned", PayNeed::Money),
    ("earning", PayNeed::Money),
    ("earnings", PayNeed::Money),
    ("equity grant", PayNeed::Money),
    ("stock options", PayNeed::Money),
    ("rsu", PayNeed::Money),
    ("rsus", PayNeed::Money),
    ("comp", PayNeed::Money),
    ("raise", PayNeed::Currency),
    ("raises", PayNeed::Currency),
    ("raised", PayNeed::Currency),
    ("per hour", PayNeed::Currency),
    ("an hour", PayNeed::Currency),
    ("hourly", PayNeed::Currency),
];

const NATIONAL_ID_PHRASES: &[&str] = &[
    "ssn",
    "social security",
    "passport number",
    "passport no",
    "national insurance",
    "ni number",
    "nino",
    "national id",
    "driver s license",
    "drivers license",
    "driver s licence",
    "drivers licence",
    "driving licence",
    "driving license",
];

const BANK_PHRASES: &[&str] = &[
    "account number",
    "account no",
    "account num",
    "acct no",
    "acct number",
    "routing number",
    "sort code",
    "bank account",
    "bank details",
    "aba number",
    "aba routing",
];

const TAX_ID_PHRASES: &[&str] = &[
    "tax id",
    "tax identification",
    "tax number",
    "taxpayer id",
    "tax file number",
    "tin",
    "itin",
    "utr",
];

const TAX_AMOUNT_PHRASES: &[&str] = &[
    "tax return",
    "tax returns",
    "tax refund",
    "tax bracket",
    "tax bill",
    "tax debt",
    "back taxes",
    "tax liability",
];

#[rustfmt::skip]
const OWE_WORDS: &[&str] = &[
    "owe", "owes", "owed", "owing", "pay", "pays", "paid", "paying",
];
const TAX_WORDS: &[&str] = &["tax", "taxes", "irs", "hmrc"];

/// Medical phrases that are sensitive on their own.
const MEDICAL_STANDALONE: &[&str] = &[
    "diagnosed with",
    "diagnosed as",
    "diagnosis of",
    "surgery for",
    "medication for",
    "medications for",
    "therapy for",
    "treatment for",
    "treated for",
    "in rehab",
    "pregnant",
    "chemotherapy",
    "chemo",
];

const MEDICAL_CONDITIONS: &[&str] = &[
    "cancer",
    "tumor",
    "tumour",
    "leukemia",
    "leukaemia",
    "lymphoma",
    "diabetes",
    "diabetic",
    "depression",
    "anxiety disorder",
    "panic attacks",
    "eating disorder",
    "adhd",
    "hiv",
    "covid",
    "pregnancy",
    "bipolar",
    "schizophrenia",
    "schizophrenic",
    "epilepsy",
    "epileptic",
    "autism",
    "autistic",
    "dementia",
    "alzheimer",
    "alzheimers",
    "asthma",
    "ptsd",
    "anorexia",
    "bulimia",
    "arthritis",
    "parkinson",
    "parkinsons",
    "hepatitis",
    "tuberculosis",
    "pneumonia",
    "migraine",
    "migraines",
    "miscarriage",
    "concussion",
    "multiple sclerosis",
    "heart attack",
    "heart condition",
    "mental illness",
    "insomnia",
    "crohn",
];

/// Context that makes a condition word personal/medical anywhere in the window.
const MEDICAL_CONTEXT: &[&str] = &[
    "diagnosed",
    "diagnosis",
    "suffering",
    "suffers",
    "suffered",
    "treatment",
    "treated",
    "therapy",
    "prescribed",
    "condition",
    "medication",
    "medications",
    "meds",
    "sick leave",
    "medical leave",
    "hospitalized",
    "hospitalised",
    "in hospital",
    "symptoms",
    "surgery",
    "living with",
    "struggling with",
    "battling",
];

/// Possession words: count only right before the condition ("has diabetes").
const MEDICAL_HAS: &[&str] = &["has", "have", "had", "having", "got"];

/// Words after a diagnosis phrase that show it is about software, not a person.
#[rustfmt::skip]
const TECH_WORDS: &[&str] = &[
    "outage", "incident", "issue", "issues", "bug", "bugs", "failure", "failures", "problem",
    "problems", "crash", "crashes", "regression", "error", "errors", "latency", "leak", "build",
    "builds", "test", "tests", "pipeline", "deploy", "deployment", "service", "services",
    "server", "servers", "cluster", "system", "network", "performance", "bottleneck", "root",
    "flaky", "alert", "alerts", "timeout", "timeouts", "database", "query", "memory", "cpu",
    "disk", "code", "codebase", "api", "app", "release", "debt", "backlog", "slowdown",
];

// ---------------------------------------------------------------------------
// Scanner
// ---------------------------------------------------------------------------

/// An alphabetic word: char span and lowercase text.
struct Tok {
    start: usize,
    end: usize,
    text: String,
}

/// A matched word or phrase: char span and token index range (inclusive).
#[derive(Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    first: usize,
    last: usize,
}

/// A number that may be an amount of money.
#[derive(Debug, Clone, Copy)]
struct Amount {
    start: usize,
    end: usize,
    int_digits: usize,
    currency: bool,
    scale: bool,
    percent: bool,
    unit: bool,
    yearlike: bool,
}

impl Amount {
    /// A number that is neither a percentage, a count of something, nor a bare year.
    fn is_amount(&self) -> bool {
        !self.percent && !self.unit && !self.bare_year()
    }
    /// Like [`Amount::is_amount`] but percentages count (tax brackets).
    fn is_number(&self) -> bool {
        !self.unit && !self.bare_year()
    }
    fn bare_year(&self) -> bool {
        self.yearlike && !self.currency && !self.scale
    }
    fn money_like(&self) -> bool {
        self.is_amount() && (self.currency || self.scale || self.int_digits >= 4)
    }
    fn has_currency(&self) -> bool {
        self.is_amount() && self.currency
    }
}

struct Scan {
    c: Vec<char>,
    sent: Vec<usize>,
    toks: Vec<Tok>,
    amounts: Vec<Amount>,
    /// The distinct token texts, sorted: a phrase whose first word is not among them has no hit, so
    /// most of the hundreds of listed phrases are dismissed without walking the tokens.
    words: Vec<String>,
    /// One bit per token text (`word_bit`): a phrase whose first word's bit is clear is dismissed
    /// without searching `words`. Hashing each phrase's first word into a set (SipHash) was two
    /// fifths of the guard's time.
    word_bits: u64,
}

fn lower(ch: char) -> char {
    if ch.is_ascii() {
        ch.to_ascii_lowercase()
    } else {
        ch.to_lowercase().next().unwrap_or(ch)
    }
}

/// A word's bit in `Scan::word_bits`, from its first byte and its length (of any size: the sum
/// wraps rather than overflows).
fn word_bit(word: &str) -> u64 {
    let first = u64::from(word.as_bytes().first().copied().unwrap_or(0));
    let length = word.len() as u64;
    1 << (first.wrapping_mul(7).wrapping_add(length.wrapping_mul(13)) % 64)
}

fn is_space(ch: char) -> bool {
    matches!(ch, ' ' | '\u{a0}' | '\u{202f}')
}

impl Scan {
    fn new(text: &str) -> Self {
        let c: Vec<char> = text.chars().map(lower).collect();
        let n = c.len();
        let mut sent = Vec::with_capacity(n);
        let mut id = 0usize;
        for (i, &ch) in c.iter().enumerate() {
            sent.push(id);
            let boundary = match ch {
                '!' | '?' | '\n' | '\r' => true,
                '.' => c.get(i + 1).is_none_or(|n| n.is_whitespace()),
                _ => false,
            };
            if boundary {
                id += 1;
            }
        }
        let mut toks = Vec::new();
        let mut i = 0;
        while i < n {
            if c[i].is_alphabetic() {
                let s = i;
                while i < n && c[i].is_alphabetic() {
                    i += 1;
                }
                toks.push(Tok {
                    start: s,
                    end: i,
                    text: c[s..i].iter().collect(),
                });
            } else {
                i += 1;
            }
        }
        let amounts = parse_amounts(&c);
        let mut words: Vec<String> = toks.iter().map(|t| t.text.clone()).collect();
        words.sort_unstable();
        words.dedup();
        let word_bits = words.iter().fold(0, |bits, word| bits | word_bit(word));
        Scan {
            c,
            sent,
            toks,
            amounts,
            words,
            word_bits,
        }
    }

    fn same_sentence(&self, a: usize, b: usize) -> bool {
        match (self.sent.get(a), self.sent.get(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    /// True when the two char spans are at most `gap` chars apart and in one sentence.
    fn near(&self, a: (usize, usize), b: (usize, usize), gap: usize) -> bool {
        let d = if a.1 <= b.0 {
            b.0 - a.1
        } else {
            a.0.saturating_sub(b.1)
        };
        d <= gap && self.same_sentence(a.0, b.0)
    }

    /// Amounts that may lie within `gap` chars of `span` (callers still apply
    /// [`Scan::near`]). Amounts are sorted and disjoint, so this is a binary
    /// search instead of a scan: checks stay near-linear on huge inputs.
    fn amounts_near(&self, span: (usize, usize), gap: usize) -> impl Iterator<Item = &Amount> {
        let lo = self
            .amounts
            .partition_point(|a| a.end.saturating_add(gap) < span.0);
        let hi = span.1.saturating_add(gap);
        self.amounts[lo..].iter().take_while(move |a| a.start <= hi)
    }

    /// All occurrences of a space-separated word phrase, on whole words, with
    /// at most 3 non-alphanumeric chars between its words.
    fn hits(&self, phrase: &str) -> Vec<Hit> {
        let mut out = Vec::new();
        if phrase.split(' ').next().is_none_or(|first| {
            self.word_bits & word_bit(first) == 0
                || self
                    .words
                    .binary_search_by(|word| word.as_str().cmp(first))
                    .is_err()
        }) {
            return out;
        }
        let words: Vec<&str> = phrase.split(' ').collect();
        if words.is_empty() || words.len() > self.toks.len() {
            return out;
        }
        'outer: for i in 0..=(self.toks.len() - words.len()) {
            for (k, w) in words.iter().enumerate() {
                let t = &self.toks[i + k];
                if t.text != *w {
                    continue 'outer;
                }
                if k > 0 {
                    let prev = &self.toks[i + k - 1];
                    let gap = &self.c[prev.end..t.start];
                    if gap.len() > 3
                        || gap.iter().any(|ch| ch.is_alphanumeric())
                        || !self.same_sentence(prev.start, t.start)
                    {
                        continue 'outer;
                    }
                }
            }
            let last = i + words.len() - 1;
            out.push(Hit {
                start: self.toks[i].start,
                end: self.toks[last].end,
                first: i,
                last,
            });
        }
        out
    }

    /// The first id-like token (alphanumerics, single `-`/space/`.` between
    /// digits) with at least `min_digits` digits starting within `max` chars
    /// after `from`, in the same sentence as `from`. Returns (start, compact).
    fn id_after(&self, from: usize, max: usize, min_digits: usize) -> Option<(usize, String)> {
        let c = &self.c;
        let n = c.len();
        let limit = from.saturating_add(max).min(n);
        let anchor = from.saturating_sub(1);
        let mut p = from;
        while p < limit {
            if !self.same_sentence(anchor, p) {
                return None;
            }
            if c[p].is_alphanumeric() && (p == 0 || !c[p - 1].is_alphanumeric()) {
                let mut q = p;
                let mut compact = String::new();
                loop {
                    if q < n && c[q].is_alphanumeric() {
                        compact.push(c[q]);
                        q += 1;
                    } else if q + 1 < n
                        && q > p
                        && matches!(c[q], '-' | ' ' | '.')
                        && c[q - 1].is_ascii_digit()
                        && c[q + 1].is_ascii_digit()
                    {
                        q += 1;
                    } else {
                        break;
                    }
                }
                let digits = compact.chars().filter(|ch| ch.is_ascii_digit()).count();
                if digits >= min_digits {
                    return Some((p, compact));
                }
                p = q.max(p + 1);
            } else {
                p += 1;
            }
        }
        None
    }

    // -- 1. IBAN ------------------------------------------------------------

    fn iban(&self) -> Option<Rejection> {
        let c = &self.c;
        let n = c.len();
        for i in 0..n.saturating_sub(3) {
            if !(c[i].is_ascii_alphabetic()
                && c[i + 1].is_ascii_alphabetic()
                && c[i + 2].is_ascii_digit()
                && c[i + 3].is_ascii_digit())
            {
                continue;
            }
            if i > 0 && c[i - 1].is_alphanumeric() {
                continue;
            }
            let mut compact: Vec<char> = Vec::new();
            let mut cuts: Vec<usize> = Vec::new();
            let mut group = 0;
            let mut j = i;
            loop {
                if j < n && c[j].is_ascii_alphanumeric() {
                    compact.push(c[j]);
                    group += 1;
                    j += 1;
                    if compact.len() > 34 {
                        break;
                    }
                } else if j + 1 < n && c[j] == ' ' && group == 4 && c[j + 1].is_ascii_alphanumeric()
                {
                    cuts.push(compact.len());
                    group = 0;
                    j += 1;
                } else {
                    break;
                }
            }
            let natural_end = compact.len() <= 34 && !(j < n && c[j].is_alphanumeric());
            if natural_end {
                cuts.push(compact.len());
            }
            for &len in cuts.iter().rev() {
                let cand = &compact[..len];
                if iban_valid(cand) {
                    let country: String = cand[..2].iter().collect();
                    return Some(Rejection {
                        kind: SensitiveKind::BankAccount,
                        reason: format!(
                            "iban {} ({len} chars, mod-97 ok)",
                            mask_tail(cand, country.len())
                        ),
                    });
                }
            }
        }
        None
    }

    // -- 2. payment card ------------------------------------------------------

    fn card(&self) -> Option<Rejection> {
        let c = &self.c;
        let n = c.len();
        let mut i = 0;
        while i < n {
            if !c[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let glued_start = i > 0 && c[i - 1].is_alphanumeric();
            // Collect digit groups separated by a single space or dash.
            let mut groups: Vec<(usize, usize)> = Vec::new();
            let mut j = i;
            loop {
                let gs = j;
                while j < n && c[j].is_ascii_digit() {
                    j += 1;
                }
                groups.push((gs, j));
                if j + 1 < n && matches!(c[j], ' ' | '-') && c[j + 1].is_ascii_digit() {
                    j += 1;
                } else {
                    break;
                }
            }
            let glued_end = j < n && c[j].is_alphanumeric();
            for a in 0..groups.len() {
                if a == 0 && glued_start {
                    continue;
                }
                let mut digits = String::new();
                for (b, &(gs, ge)) in groups.iter().enumerate().skip(a) {
                    digits.extend(&c[gs..ge]);
                    if digits.len() > 19 {
                        break;
                    }
                    if digits.len() < 13 || (b + 1 == groups.len() && glued_end) {
                        continue;
                    }
                    if let Some(issuer) = card_issuer(&digits) {
                        if luhn_ok(&digits) {
                            let d: Vec<char> = digits.chars().collect();
                            return Some(Rejection {
                                kind: SensitiveKind::PaymentCard,
                                reason: format!(
                                    "card number {} ({issuer}, {} digits, luhn ok)",
                                    mask_tail(&d, 0),
                                    d.len()
                                ),
                            });
                        }
                    }
                }
            }
            i = j.max(i + 1);
        }
        None
    }

    // -- 3. US SSN pattern ----------------------------------------------------

    fn ssn(&self) -> Option<Rejection> {
        let c = &self.c;
        let n = c.len();
        if n < 11 {
            return None;
        }
        let d = |k: usize| c[k].is_ascii_digit();
        for i in 0..=(n - 11) {
            if !d(i) {
                continue;
            }
            // Part of a longer id ("SN-123-45-6789", "A1/123-45-6789") is not an SSN.
            if i > 0
                && (c[i - 1].is_alphanumeric()
                    || (matches!(c[i - 1], '-' | '.' | '/' | ',')
                        && i > 1
                        && c[i - 2].is_alphanumeric()))
            {
                continue;
            }
            let sep = c[i + 3];
            if !(d(i + 1) && d(i + 2) && matches!(sep, '-' | ' ') && d(i + 4) && d(i + 5)) {
                continue;
            }
            if c[i + 6] != sep || !(d(i + 7) && d(i + 8) && d(i + 9) && d(i + 10)) {
                continue;
            }
            let e = i + 11;
            // Likewise a part number that goes on ("479-87-2792-C").
            if e < n
                && (c[e].is_alphanumeric()
                    || (matches!(c[e], '-' | '.' | '/') && e + 1 < n && c[e + 1].is_alphanumeric()))
            {
                continue;
            }
            let digits: String = [i, i + 1, i + 2, i + 4, i + 5, i + 7, i + 8, i + 9, i + 10]
                .iter()
                .map(|&k| c[k])
                .collect();
            if ssn_ranges_ok(&digits) {
                return Some(Rejection {
                    kind: SensitiveKind::NationalId,
                    reason: format!("us social security number ***-**-{}", &digits[5..]),
                });
            }
        }
        None
    }

    // -- 4. national id phrases ----------------------------------------------

    fn id_phrase(&self) -> Option<Rejection> {
        for phrase in NATIONAL_ID_PHRASES {
            for h in self.hits(phrase) {
                let Some((_, id)) = self.id_after(h.end, 40, 6) else {
                    continue;
                };
                let is_ssn = matches!(*phrase, "ssn" | "social security");
                let digits: String = id.chars().filter(|ch| ch.is_ascii_digit()).collect();
                if is_ssn && digits.len() == 9 && id.len() == 9 && !ssn_ranges_ok(&digits) {
                    continue;
                }
                let idc: Vec<char> = id.chars().collect();
                return Some(Rejection {
                    kind: SensitiveKind::NationalId,
                    reason: format!(
                        "national id (\"{}\" followed by an id {})",
                        phrase.replace(" s ", "'s "),
                        mask_tail(&idc, 0)
                    ),
                });
            }
        }
        None
    }

    // -- 5. bank phrases -------------------------------------------------------

    fn bank_phrase(&self) -> Option<Rejection> {
        for phrase in BANK_PHRASES {
            for h in self.hits(phrase) {
                if let Some((_, id)) = self.id_after(h.end, 40, 6) {
                    let idc: Vec<char> = id.chars().collect();
                    return Some(Rejection {
                        kind: SensitiveKind::BankAccount,
                        reason: format!(
                            "bank account number (\"{phrase}\" followed by {} digits {})",
                            idc.iter().filter(|ch| ch.is_ascii_digit()).count(),
                            mask_tail(&idc, 0)
                        ),
                    });
                }
            }
        }
        None
    }

    // -- 6. tax ------------------------------------------------------------------

    fn tax(&self) -> Option<Rejection> {
        for phrase in TAX_ID_PHRASES {
            for h in self.hits(phrase) {
                if let Some((_, id)) = self.id_after(h.end, 30, 6) {
                    let idc: Vec<char> = id.chars().collect();
                    return Some(Rejection {
                        kind: SensitiveKind::TaxDetails,
                        reason: format!(
                            "tax id (\"{phrase}\" followed by an id {})",
                            mask_tail(&idc, 0)
                        ),
                    });
                }
            }
        }
        for phrase in TAX_AMOUNT_PHRASES {
            for h in self.hits(phrase) {
                let span = (h.start, h.end);
                if self
                    .amounts_near(span, 60)
                    .any(|a| a.is_number() && self.near(span, (a.start, a.end), 60))
                {
                    return Some(Rejection {
                        kind: SensitiveKind::TaxDetails,
                        reason: format!("tax details (\"{phrase}\" with a number)"),
                    });
                }
            }
        }
        let mut tax_words: Vec<Hit> = TAX_WORDS.iter().flat_map(|w| self.hits(w)).collect();
        tax_words.sort_by_key(|h| h.start);
        for owe in OWE_WORDS {
            for h in self.hits(owe) {
                let span = (h.start, h.end);
                let has_tax = hits_near(&tax_words, span, 60, |t| *t)
                    .any(|t| self.near(span, (t.start, t.end), 60));
                if !has_tax {
                    continue;
                }
                if self
                    .amounts_near(span, 60)
                    .any(|a| a.is_amount() && self.near(span, (a.start, a.end), 60))
                {
                    return Some(Rejection {
                        kind: SensitiveKind::TaxDetails,
                        reason: format!("tax details (\"{owe}\" taxes with an amount)"),
                    });
                }
            }
        }
        None
    }

    // -- 7. compensation -------------------------------------------------------

    fn compensation(&self) -> Option<Rejection> {
        let mut words: Vec<(Hit, &str, PayNeed)> = Vec::new();
        for &(w, need) in PAY_WORDS {
            for h in self.hits(w) {
                words.push((h, w, need));
            }
        }
        // "/hr" and "/hour" right after a number ("$80/hr").
        let c = &self.c;
        for i in 0..c.len() {
            if c[i] != '/' {
                continue;
            }
            for suffix in ["hour", "hr"] {
                let e = i + 1 + suffix.len();
                if e <= c.len()
                    && c[i + 1..e].iter().copied().eq(suffix.chars())
                    && !c.get(e).is_some_and(|ch| ch.is_alphabetic())
                {
                    let h = Hit {
                        start: i,
                        end: e,
                        first: 0,
                        last: 0,
                    };
                    words.push((h, "/hr", PayNeed::Currency));
                    break;
                }
            }
        }
        words.sort_by_key(|w| w.0.start);
        for (h, w, need) in words {
            let span = (h.start, h.end);
            let found = self.amounts_near(span, 60).any(|a| {
                let aspan = (a.start, a.end);
                match need {
                    PayNeed::Any => {
                        (a.money_like() && self.near(span, aspan, 60))
                            || (a.is_amount() && a.start >= h.end && self.near(span, aspan, 25))
                            || (a.percent && a.is_number() && self.near(span, aspan, 25))
                    }
                    PayNeed::Money => a.money_like() && self.near(span, aspan, 60),
                    PayNeed::Currency => a.has_currency() && self.near(span, aspan, 60),
                }
            });
            if found {
                return Some(Rejection {
                    kind: SensitiveKind::Compensation,
                    reason: format!("compensation (\"{w}\" with an amount)"),
                });
            }
        }
        None
    }

    // -- 8. medical ------------------------------------------------------------

    fn medical(&self) -> Option<Rejection> {
        for phrase in MEDICAL_STANDALONE {
            for h in self.hits(phrase) {
                let techy = self.toks[h.last + 1..]
                    .iter()
                    .take(4)
                    .any(|t| TECH_WORDS.contains(&t.text.as_str()));
                if techy {
                    continue;
                }
                return Some(Rejection {
                    kind: SensitiveKind::MedicalDiagnosis,
                    reason: format!("medical diagnosis (\"{phrase}\")"),
                });
            }
        }
        let mut contexts: Vec<(Hit, &str)> = MEDICAL_CONTEXT
            .iter()
            .flat_map(|w| self.hits(w).into_iter().map(move |h| (h, *w)))
            .collect();
        contexts.sort_by_key(|(h, _)| h.start);
        let mut has: Vec<(Hit, &str)> = MEDICAL_HAS
            .iter()
            .flat_map(|w| self.hits(w).into_iter().map(move |h| (h, *w)))
            .collect();
        has.sort_by_key(|(h, _)| h.first);
        for cond in MEDICAL_CONDITIONS {
            for h in self.hits(cond) {
                let span = (h.start, h.end);
                let lo = has.partition_point(|(x, _)| x.last + 3 < h.first);
                let ctx = hits_near(&contexts, span, 60, |(x, _)| *x)
                    .find(|(x, _)| self.near(span, (x.start, x.end), 60))
                    .or_else(|| {
                        has[lo..]
                            .iter()
                            .take_while(|(x, _)| x.first < h.first)
                            .find(|(x, _)| {
                                x.last < h.first
                                    && h.first - x.last <= 3
                                    && self.same_sentence(x.start, h.start)
                            })
                    });
                if let Some((_, w)) = ctx {
                    return Some(Rejection {
                        kind: SensitiveKind::MedicalDiagnosis,
                        reason: format!("medical condition (\"{cond}\" with \"{w}\")"),
                    });
                }
            }
        }
        None
    }
}

/// Longest span a word-list hit can have (phrases are short, joined by at
/// most 3 chars), used to bound the binary search in [`hits_near`].
const MAX_HIT_CHARS: usize = 64;

/// Items of `list` (sorted by hit start) whose hit may lie within `gap` chars of `span`.
fn hits_near<T>(
    list: &[T],
    span: (usize, usize),
    gap: usize,
    hit: impl Fn(&T) -> Hit,
) -> impl Iterator<Item = &T> {
    let lo = list.partition_point(|t| hit(t).start.saturating_add(MAX_HIT_CHARS + gap) < span.0);
    let hi = span.1.saturating_add(gap);
    list[lo..].iter().take_while(move |t| hit(t).start <= hi)
}

// ---------------------------------------------------------------------------
// Amount parsing
// ---------------------------------------------------------------------------

fn is_currency_symbol(ch: char) -> bool {
    CURRENCY_SYMBOLS.contains(&ch)
}

/// The alphabetic word starting after at most 2 spaces from `j`: (word, end).
fn word_after(c: &[char], j: usize) -> Option<(String, usize)> {
    let n = c.len();
    let mut k = j;
    let mut spaces = 0;
    while k < n && spaces < 2 && is_space(c[k]) {
        k += 1;
        spaces += 1;
    }
    let s = k;
    while k < n && c[k].is_alphabetic() {
        k += 1;
    }
    if k > s {
        Some((c[s..k].iter().collect(), k))
    } else {
        None
    }
}

/// Skips a run of digits/letters and number punctuation (dates, versions, phones).
fn skip_numeric_chain(c: &[char], i: usize) -> usize {
    let n = c.len();
    let mut j = i;
    while j < n {
        let joins_digits =
            matches!(c[j], '.' | ',' | '-' | '/' | ':') && j + 1 < n && c[j + 1].is_ascii_digit();
        if !(c[j].is_alphanumeric() || joins_digits) {
            break;
        }
        j += 1;
    }
    j.max(i + 1)
}

fn parse_amounts(c: &[char]) -> Vec<Amount> {
    let n = c.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if !c[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let prev = if i > 0 { c[i - 1] } else { ' ' };
        let prev2 = if i > 1 { c[i - 2] } else { ' ' };
        if prev.is_alphanumeric()
            || (matches!(prev, '.' | ',' | '-' | '/' | ':') && prev2.is_ascii_digit())
        {
            i = skip_numeric_chain(c, i);
            continue;
        }
        match parse_amount_at(c, i, true) {
            Some(a) => {
                i = a.end.max(i + 1);
                out.push(a);
            }
            None => i = skip_numeric_chain(c, i),
        }
    }
    out
}

/// Parses a number starting at digit `i`. Returns `None` for dates, times,
/// phone numbers and version strings.
fn parse_amount_at(c: &[char], i: usize, allow_range: bool) -> Option<Amount> {
    let n = c.len();
    let digit = |k: usize| k < n && c[k].is_ascii_digit();
    let alpha = |k: usize| k < n && c[k].is_alphabetic();

    // Currency before: "$120", "usd 90", "€ 5".
    let mut q = i;
    if q > 0 && is_space(c[q - 1]) {
        q -= 1;
    }
    let mut currency = q > 0 && is_currency_symbol(c[q - 1]);
    if !currency {
        let mut s = q;
        while s > 0 && c[s - 1].is_alphabetic() {
            s -= 1;
        }
        if s < q {
            let w: String = c[s..q].iter().collect();
            currency = CURRENCY_WORDS.contains(&w.as_str());
        }
    }

    // Integer part with optional thousands groups.
    let mut j = i;
    while digit(j) {
        j += 1;
    }
    let first = j - i;
    let mut int_digits = first;
    let mut grouped = false;
    if first <= 3 {
        let mut sep: Option<char> = None;
        while j < n
            && matches!(c[j], ',' | '.' | ' ' | '\u{a0}' | '\u{202f}' | '\'')
            && sep.is_none_or(|s| s == c[j])
            && digit(j + 1)
            && digit(j + 2)
            && digit(j + 3)
            && !digit(j + 4)
        {
            sep = Some(c[j]);
            j += 4;
            int_digits += 3;
            grouped = true;
        }
    }
    // Decimal part.
    let mut decimal = false;
    if j < n && matches!(c[j], '.' | ',') && digit(j + 1) {
        let mut k = j + 1;
        while digit(k) {
            k += 1;
        }
        if k < n && matches!(c[k], '.' | ',') && digit(k + 1) {
            return None; // version-like: 4.2.0
        }
        j = k;
        decimal = true;
    }
    // Times, dates, fractions.
    if j < n && matches!(c[j], '/' | ':') && digit(j + 1) {
        return None;
    }
    // Ranges ("90-120k") versus dates/phones ("2026-09-30", "555-123-4567").
    if j < n && matches!(c[j], '-' | '–' | '—') && digit(j + 1) {
        if !allow_range {
            return None;
        }
        let tail = parse_amount_at(c, j + 1, false)?;
        if tail.scale || tail.currency || currency {
            return Some(Amount {
                start: i,
                end: tail.end,
                int_digits: int_digits.max(tail.int_digits),
                currency: currency || tail.currency,
                scale: tail.scale,
                percent: tail.percent,
                unit: tail.unit,
                yearlike: false,
            });
        }
        return None;
    }

    // Scale suffix: "150k", "2.5m", "3bn", "85 thousand".
    let mut scale = false;
    if j < n && matches!(c[j], 'k' | 'm' | 'b') && !alpha(j + 1) {
        scale = true;
        j += 1;
    } else if j + 1 < n
        && matches!((c[j], c[j + 1]), ('m', 'n') | ('m', 'm') | ('b', 'n'))
        && !alpha(j + 2)
    {
        scale = true;
        j += 2;
    } else if let Some((w, e)) = word_after(c, j) {
        if SCALE_WORDS.contains(&w.as_str()) {
            scale = true;
            j = e;
        }
    }

    // Currency after: "90 000 eur", "100€", "50 dollars".
    let mut k = j;
    if k < n && is_space(c[k]) {
        k += 1;
    }
    if k < n && is_currency_symbol(c[k]) {
        currency = true;
        j = k + 1;
    } else if let Some((w, e)) = word_after(c, j) {
        if CURRENCY_WORDS.contains(&w.as_str()) {
            currency = true;
            j = e;
        }
    }

    // Percent or unit after.
    let mut percent = false;
    let mut unit = false;
    let mut k = j;
    while k < n && k < j + 2 && is_space(c[k]) {
        k += 1;
    }
    if k < n && c[k] == '%' {
        percent = true;
        j = k + 1;
    } else if let Some((w, _)) = word_after(c, j) {
        if w == "percent" || w == "pct" {
            percent = true;
        } else if !currency && UNIT_WORDS.contains(&w.as_str()) {
            unit = true;
        }
    }

    let yearlike = !grouped && !decimal && first == 4 && {
        let v: u32 = c[i..i + 4]
            .iter()
            .fold(0, |acc, ch| acc * 10 + ch.to_digit(10).unwrap_or(0));
        (1900..=2100).contains(&v)
    };

    Some(Amount {
        start: i,
        end: j,
        int_digits,
        currency,
        scale,
        percent,
        unit,
        yearlike,
    })
}

// ---------------------------------------------------------------------------
// Number validators
// ---------------------------------------------------------------------------

/// Masks every alphanumeric char except the first `keep_head` and the last 4 with `*`.
fn mask_tail(chars: &[char], keep_head: usize) -> String {
    let n = chars.len();
    chars
        .iter()
        .enumerate()
        .map(|(i, &ch)| {
            if i < keep_head || i + 4 >= n || !ch.is_alphanumeric() {
                ch
            } else {
                '*'
            }
        })
        .collect()
}

/// Luhn checksum over an ASCII digit string.
fn luhn_ok(digits: &str) -> bool {
    let mut sum = 0u32;
    for (i, ch) in digits.chars().rev().enumerate() {
        let Some(mut d) = ch.to_digit(10) else {
            return false;
        };
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// The card issuer whose prefix and length match an ASCII digit string.
fn card_issuer(d: &str) -> Option<&'static str> {
    let len = d.len();
    if len < 13 || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let p = |k: usize| -> u32 { d[..k].parse().unwrap_or(0) };
    if d.starts_with('4') && matches!(len, 13 | 16 | 19) {
        return Some("visa");
    }
    if len == 16 && ((51..=55).contains(&p(2)) || (2221..=2720).contains(&p(4))) {
        return Some("mastercard");
    }
    if len == 15 && matches!(p(2), 34 | 37) {
        return Some("amex");
    }
    if (16..=19).contains(&len) && (p(4) == 6011 || (644..=649).contains(&p(3)) || p(2) == 65) {
        return Some("discover");
    }
    if (16..=19).contains(&len) && (3528..=3589).contains(&p(4)) {
        return Some("jcb");
    }
    if (14..=19).contains(&len)
        && (p(2) == 36 || (300..=305).contains(&p(3)) || matches!(p(2), 38 | 39))
    {
        return Some("diners");
    }
    if (16..=19).contains(&len) && p(2) == 62 {
        return Some("unionpay");
    }
    None
}

/// US SSN ranges that are never issued: area 000, 666, 900–999; group 00; serial 0000.
fn ssn_ranges_ok(digits: &str) -> bool {
    if digits.len() != 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let area: u32 = digits[..3].parse().unwrap_or(0);
    let group: u32 = digits[3..5].parse().unwrap_or(0);
    let serial: u32 = digits[5..].parse().unwrap_or(0);
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// IBAN lengths per country (ISO 13616 registry).
#[rustfmt::skip]
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("ad", 24), ("ae", 23), ("al", 28), ("at", 20), ("az", 28), ("ba", 20), ("be", 16),
    ("bg", 22), ("bh", 22), ("br", 29), ("ch", 21), ("cr", 22), ("cy", 28), ("cz", 24),
    ("de", 22), ("dk", 18), ("do", 28), ("ee", 20), ("es", 24), ("fi", 18), ("fo", 18),
    ("fr", 27), ("gb", 22), ("ge", 22), ("gi", 23), ("gl", 18), ("gr", 27), ("gt", 28),
    ("hr", 21), ("hu", 28), ("ie", 22), ("il", 23), ("is", 26), ("it", 27), ("jo", 30),
    ("kw", 30), ("kz", 20), ("lb", 28), ("li", 21), ("lt", 20), ("lu", 20), ("lv", 21),
    ("mc", 27), ("md", 24), ("me", 22), ("mk", 19), ("mr", 27), ("mt", 31), ("mu", 30),
    ("nl", 18), ("no", 15), ("pk", 24), ("pl", 28), ("ps", 29), ("pt", 25), ("qa", 29),
    ("ro", 24), ("rs", 22), ("sa", 24), ("se", 24), ("si", 19), ("sk", 24), ("sm", 27),
    ("tn", 24), ("tr", 26), ("ua", 29), ("vg", 24), ("xk", 20),
];

/// Validates a compact IBAN candidate (lowercase or uppercase ASCII).
fn iban_valid(s: &[char]) -> bool {
    let len = s.len();
    if !(15..=34).contains(&len) || !s.iter().all(|ch| ch.is_ascii_alphanumeric()) {
        return false;
    }
    if !(s[0].is_ascii_alphabetic()
        && s[1].is_ascii_alphabetic()
        && s[2].is_ascii_digit()
        && s[3].is_ascii_digit())
    {
        return false;
    }
    let check = s[2].to_digit(10).unwrap_or(0) * 10 + s[3].to_digit(10).unwrap_or(0);
    if !(2..=98).contains(&check) {
        return false;
    }
    let country: String = s[..2].iter().map(|ch| ch.to_ascii_lowercase()).collect();
    if let Some(&(_, want)) = IBAN_LENGTHS.iter().find(|(cc, _)| *cc == country) {
        if len != want {
            return false;
        }
    }
    let mut rem: u32 = 0;
    for &ch in s[4..].iter().chain(s[..4].iter()) {
        match ch.to_digit(36) {
            Some(v) if v < 10 => rem = (rem * 10 + v) % 97,
            Some(v) => rem = (rem * 100 + v) % 97,
            None => return false,
        }
    }
    rem == 1
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<SensitiveKind> {
        check_text(text).map(|r| r.kind)
    }

    fn assert_kind(text: &str, want: SensitiveKind) {
        let got = check_text(text);
        assert_eq!(
            got.as_ref().map(|r| r.kind.clone()),
            Some(want),
            "text: {text:?}, got {got:?}"
        );
        let r = got.unwrap();
        assert_eq!(r.reason, r.reason.to_lowercase(), "reason not lowercase");
        assert!(!r.reason.ends_with('.'), "reason ends with a period");
        assert!(!r.reason.is_empty());
    }

    fn assert_clean(text: &str) {
        assert_eq!(check_text(text), None, "text: {text:?}");
    }

    #[test]
    fn display_kinds() {
        assert_eq!(SensitiveKind::Compensation.to_string(), "compensation");
        assert_eq!(SensitiveKind::PaymentCard.to_string(), "payment card");
        assert_eq!(SensitiveKind::BankAccount.to_string(), "bank account");
        assert_eq!(SensitiveKind::NationalId.to_string(), "national id");
        assert_eq!(SensitiveKind::TaxDetails.to_string(), "tax details");
        assert_eq!(
            SensitiveKind::MedicalDiagnosis.to_string(),
            "medical diagnosis"
        );
    }

    #[test]
    fn realistic_meeting_sentences_are_clean() {
        for t in [
            "The latency budget is 200 ms",
            "Atlas beta is due 2026-09-30",
            "Ticket 4111 is blocked",
            "Call me at 555-123-4567",
            "We pay attention to p95",
            "Order 1234567890123",
            "Version 4.2.0 ships",
            "Let's pay off technical debt before Q3",
            "We need a 5k latency budget for search",
            "We raised the limit to 100 units",
            "We raised the timeout to 30 seconds",
            "The service handles 5000 requests per hour",
            "Salary review is in 2026",
            "Discuss compensation bands at 3pm",
            "Budget for the offsite is $50k",
            "Meeting moved to 10:30 on 12/05",
            "Use the tin can telephone, 3 items left",
            "Deploy build 20240101 to staging",
            "Sprint 14 velocity was 42 points",
            "Invoice INV-2026-0042 was sent",
            "Card component needs a redesign",
            "The account page shows 3 tabs",
            "",
        ] {
            assert_clean(t);
        }
    }

    // -- compensation ------------------------------------------------------------

    #[test]
    fn compensation_positive() {
        for t in [
            "Her salary is $120,000",
            "Base pay 150k plus bonus",
            "He earns €95.000 a year",
            "salary: 90 000 EUR",
            "We pay contractors $85 per hour",
            "Contractor rate is $85/hr",
            "She makes 40 dollars an hour",
            "Bob got a raise to $130k",
            "Annual compensation of 2.5M",
            "His income is 80k",
            "salary range 90-120k",
            "his salary is 85 thousand",
            "The salary of 90 was agreed",
            "Her salary is 10% above band",
            "A 5% salary increase for Dana",
            "Equity grant worth 40,000 USD",
            "Paid £3,200 last month as a bonus",
            "Ana's wage: ¥4,500,000",
        ] {
            assert_kind(t, SensitiveKind::Compensation);
        }
    }

    #[test]
    fn compensation_negative() {
        for t in [
            "We pay attention to p95",
            "Pay off technical debt this quarter",
            "a 5k latency budget",
            "we raised the limit to 100 units",
            "We need to pay 2 invoices",
            "Bonus points: 100 for the best demo",
            "Salary bands for 5 engineers are under review",
            "The earnings call is on 2026-02-01",
            "raise the priority of issue 4521",
            "Raise the cache hit rate by 10%",
            "Income statement review on 2026-03-01",
        ] {
            assert_clean(t);
        }
    }

    #[test]
    fn compensation_reason_does_not_echo_amount() {
        let r = check_text("Her salary is $123,456").unwrap();
        assert_eq!(r.reason, "compensation (\"salary\" with an amount)");
        assert!(!r.reason.contains("123"));
    }

    // -- payment cards -----------------------------------------------------------

    #[test]
    fn card_positive() {
        for (t, issuer) in [
            ("card 4111 1111 1111 1111 exp 12/27", "visa"),
            ("4111-1111-1111-1111", "visa"),
            ("4222222222222", "visa"),
            ("5555555555554444", "mastercard"),
            ("2223003122003222", "mastercard"),
            ("Amex 378282246310005", "amex"),
            ("6011111111111117", "discover"),
            ("3530111333300000", "jcb"),
            ("30569309025904", "diners"),
            ("6200000000000005", "unionpay"),
            ("card 4111 1111 1111 1111 12 27", "visa"),
        ] {
            let r = check_text(t).unwrap_or_else(|| panic!("not flagged: {t}"));
            assert_eq!(r.kind, SensitiveKind::PaymentCard, "{t}");
            assert!(r.reason.contains(issuer), "{t}: {}", r.reason);
        }
    }

    #[test]
    fn card_reason_is_masked() {
        let r = check_text("pay with 4111 1111 1111 1111").unwrap();
        assert_eq!(r.kind, SensitiveKind::PaymentCard);
        assert_eq!(
            r.reason,
            "card number ************1111 (visa, 16 digits, luhn ok)"
        );
        assert!(!r.reason.contains("4111"));
    }

    #[test]
    fn card_negative() {
        for t in [
            "Order 1234567890123",
            "4111 1111 1111 1112",
            "1234567812345670",
            "Call +1 555-123-4567 or 555 123 4567",
            "Tracking 9400111899223197428490",
            "4111111111111111abc",
        ] {
            assert_ne!(kind(t), Some(SensitiveKind::PaymentCard), "{t}");
        }
    }

    // -- bank accounts ---------------------------------------------------------

    #[test]
    fn iban_positive() {
        for t in [
            "Wire to DE89 3704 0044 0532 0130 00 please",
            "GB82WEST12345698765432",
            "gb82 west 1234 5698 7654 32",
            "NL91ABNA0417164300",
            "BE68 5390 0754 7034 then send",
            "FR14 2004 1010 0505 0001 3M02 606",
            "CH93 0076 2011 6238 5295 7",
            "IBAN: NO9386011117947",
        ] {
            assert_kind(t, SensitiveKind::BankAccount);
        }
        let r = check_text("DE89370400440532013000").unwrap();
        assert_eq!(
            r.reason,
            "iban de****************3000 (22 chars, mod-97 ok)"
        );
    }

    #[test]
    fn iban_negative() {
        for t in [
            "DE88 3704 0044 0532 0130 00",
            "DE89 3704 0044 0532 0130",
            "GB82WEST1234569876543",
            "AB12 is a room name",
        ] {
            assert_ne!(kind(t), Some(SensitiveKind::BankAccount), "{t}");
        }
    }

    #[test]
    fn bank_phrases() {
        assert_kind("account number 12345678", SensitiveKind::BankAccount);
        assert_kind("Sort code 12-34-56, thanks", SensitiveKind::BankAccount);
        assert_kind("routing number: 021000021", SensitiveKind::BankAccount);
        assert_kind(
            "her bank account is 0012 3456 78",
            SensitiveKind::BankAccount,
        );
        let r = check_text("account number 12345678").unwrap();
        assert!(r.reason.contains("****5678"), "{}", r.reason);
        assert!(!r.reason.contains("12345678"));
        assert_clean("account number is pending");
        assert_clean("bank account setup for the vendor is done");
        assert_clean("account 12345678 renewed");
    }

    // -- national ids ------------------------------------------------------------

    #[test]
    fn ssn_positive() {
        assert_kind("my number is 123-45-6789", SensitiveKind::NationalId);
        assert_kind("SSN 123456789", SensitiveKind::NationalId);
        assert_kind(
            "social security number is 123 45 6789",
            SensitiveKind::NationalId,
        );
        assert_kind("Passport number X1234567", SensitiveKind::NationalId);
        assert_kind(
            "national insurance QQ 12 34 56 C",
            SensitiveKind::NationalId,
        );
        let r = check_text("ssn 123-45-6789").unwrap();
        assert_eq!(r.reason, "us social security number ***-**-6789");
    }

    #[test]
    fn ssn_negative() {
        for t in [
            "000-12-3456",
            "666-12-3456",
            "900-12-3456",
            "999-12-3456",
            "123-00-4567",
            "123-45-0000",
            "123456789",
            "ssn 000123456",
            "ssn 666123456",
            "123-45-6789-0",
        ] {
            assert_eq!(kind(t), None, "{t}");
        }
    }

    // -- tax ------------------------------------------------------------------------

    #[test]
    fn tax_positive() {
        for t in [
            "Her tax return shows $85k",
            "TIN 12-3456789",
            "tax id: 98-7654321",
            "He is in the 32% tax bracket",
            "She owes $12,000 in taxes",
            "tax refund of €1.200",
            "He paid 4,300 to the IRS",
        ] {
            assert_kind(t, SensitiveKind::TaxDetails);
        }
    }

    #[test]
    fn tax_negative() {
        for t in [
            "File the 2025 tax return checklist",
            "Tax calculation module ships in v2",
            "The tin can holds 3 items",
            "We owe the design team 2 reviews",
            "Tax return feature: add tooltip",
        ] {
            assert_clean(t);
        }
    }

    // -- medical ---------------------------------------------------------------------

    #[test]
    fn medical_positive() {
        for t in [
            "Dana was diagnosed with diabetes",
            "He has depression and is on medication",
            "She is pregnant, out from June",
            "Sam is on sick leave for cancer treatment",
            "Alex has ADHD",
            "Prescribed medication for anxiety disorder",
            "Chris is in rehab until March",
            "Diagnosis of epilepsy last year",
            "Jo is undergoing chemotherapy",
            "She has asthma so no offsite hike",
            "Kim is suffering from long COVID",
            "Lee had a heart attack last week",
        ] {
            assert_kind(t, SensitiveKind::MedicalDiagnosis);
        }
    }

    #[test]
    fn medical_negative() {
        for t in [
            "Our diagnosis of the outage points to DNS",
            "The covid policy has been updated",
            "The team has anxiety about the launch",
            "Cancer research grant proposal is due Friday",
            "The prescribed format is JSON",
            "Therapy app onboarding flow is ready",
            "Treatment for the flaky tests: retry twice",
            "We diagnosed the memory leak",
            "Depression of the key is detected in firmware",
            "She has a dentist appointment",
        ] {
            assert_clean(t);
        }
    }

    // -- candidates ------------------------------------------------------------------

    #[test]
    fn candidate_checks_each_text_and_joined() {
        assert_eq!(check_candidate(["owner", "dana", "Atlas beta"]), None);
        assert_eq!(check_candidate(Vec::<&str>::new()), None);
        let r = check_candidate(["status", "Alex has ADHD"]).unwrap();
        assert_eq!(r.kind, SensitiveKind::MedicalDiagnosis);
        // Split across predicate and value.
        let r = check_candidate(["base_salary", "120000"]).unwrap();
        assert_eq!(r.kind, SensitiveKind::Compensation);
        // First rejecting text wins.
        let r = check_candidate(["4111 1111 1111 1111", "salary 90k"]).unwrap();
        assert_eq!(r.kind, SensitiveKind::PaymentCard);
        let texts = [String::from("deadline"), String::from("2026-09-30")];
        assert_eq!(check_candidate(texts.iter().map(String::as_str)), None);
    }

    // -- robustness ------------------------------------------------------------------

    #[test]
    fn never_panics_on_odd_input() {
        let long_digits = "9".repeat(10_000);
        let long_spaced = "1 ".repeat(5_000);
        let long_dashed = "1-".repeat(5_000);
        let long_groups = "4111 ".repeat(2_000);
        let long_iban = "DE89 ".repeat(2_000);
        let mixed = "salary 💰 $ ".repeat(500);
        let odd: Vec<&str> = vec![
            "",
            " ",
            "💳💰🏦",
            "$",
            "€",
            "£",
            "¥",
            "USD",
            "$.",
            "1,",
            "1.",
            "$1.",
            "1-",
            "-1",
            "1k",
            "k1",
            "de89",
            "DE",
            "ssn",
            "tax id",
            "account number",
            "diagnosed with",
            "İstanbul ₹ 𝟙𝟚𝟛 ٣٤٥ ١٢٣-٤٥-٦٧٨٩",
            "ǅ ß ẞ ﬁ Σ",
            "\u{0}\u{1f}\u{feff}",
            "1234567890123456789012345678901234567890",
            "4111 1111 1111 1111\u{301}",
            "salary\u{a0}90\u{202f}000\u{a0}€",
            &long_digits,
            &long_spaced,
            &long_dashed,
            &long_groups,
            &long_iban,
            &mixed,
        ];
        for t in odd {
            let _ = check_text(t);
        }
        let _ = check_candidate(["💰", "", "$"]);
    }

    #[test]
    fn unicode_around_sensitive_data() {
        assert_kind("💳 4111 1111 1111 1111 ✅", SensitiveKind::PaymentCard);
        assert_kind("Gehalt — salary €95.000 — ok", SensitiveKind::Compensation);
        assert_kind(
            "Ünal was DIAGNOSED WITH asthma",
            SensitiveKind::MedicalDiagnosis,
        );
    }

    #[test]
    fn validators() {
        assert!(luhn_ok("4111111111111111"));
        assert!(!luhn_ok("4111111111111112"));
        assert!(!luhn_ok(""));
        assert_eq!(card_issuer("1234567812345670"), None);
        assert_eq!(card_issuer("3782822463100050"), None); // amex prefix, wrong length
        let iban: Vec<char> = "GB82WEST12345698765432".chars().collect();
        assert!(iban_valid(&iban));
        let bad: Vec<char> = "GB83WEST12345698765432".chars().collect();
        assert!(!iban_valid(&bad));
        assert!(ssn_ranges_ok("123456789"));
        assert!(!ssn_ranges_ok("987654321"));
        assert_eq!(
            mask_tail(&"12345678".chars().collect::<Vec<_>>(), 0),
            "****5678"
        );
        assert_eq!(mask_tail(&"123".chars().collect::<Vec<_>>(), 0), "123");
    }
}
