//! The `rules` extractor: deterministic, offline statement patterns, tuned for precision over recall (a
//! wrong fact costs a user more than a missed one).
//!
//! Each sentence of each segment is matched on its own. "I" is the speaking participant; "you" is the
//! person addressed at the start of the sentence ("Alice, you're ..."); a participant can also be named by
//! full name or unique first name; "we" speaks for the speaker's team. People are only ever participants:
//! the extractor never invents a person. Projects, companies and places are capitalized names in the
//! object position of a pattern. Sentences that are questions (except "Name, can you ...?" requests),
//! negated, hedged ("if", "maybe", "might", "would", "think", ...), or all in capitals (broadcast
//! captions) give nothing. The patterns:
//!
//! | statement | candidate |
//! |---|---|
//! | I'm (now) (the) *Title* / my (new) title is *Title* / I was promoted to *Title* | `has_title` |
//! | I'm *Title* at *Company* | `has_title` and `works_at` |
//! | you're *role* on *Project* | `has_role` in the project |
//! | I work at/for *Company*, I joined *Company*, I'm joining *Company* | `works_at` |
//! | I left *Company*, I'm leaving *Company*, my last day at *Company* | `works_at`, ending (termination) |
//! | I'm based/located in *Place*, I live in *Place*, I'm moving/I moved/relocated to *Place* | `located_in` |
//! | I'm leading *Project*, I lead *Project*, I'm the lead on *Project* | `led_by_person` |
//! | I own *Project*, I'm taking (over) ownership of *Project*, I'm the owner of *Project* | `owns_project` |
//! | I contribute to / work on / am helping on *Project*, I joined the *Project* team | `contributes_to` |
//! | I'm handing *Project* off/over to *Person* | `owns_project` ending for me, starting for them |
//! | I'm no longer the owner of / leading / working on *Project* | the matching claim, ending |
//! | I report to *Person* | `reports_to` |
//! | *Project* is canceled / shipped / launched / live / on hold / paused / blocked / delayed / at risk / on track / in beta / done; we canceled / shipped / paused *Project*; we're putting *Project* on hold | `has_status` |
//! | *Project* is due / ships / launches / goes live / will ship by *date*; we'll ship *Project* by *date*; the deadline for *Project* is *date* | `has_deadline` with `due_at` |
//! | I'll / *Person* will *action* ... (by *date*); we'll *action* ... by *date*; *Person*, can you *action* ...? | a task for that person |
//! | a URL in a sentence naming a project that other statements of the meeting are about | `has_link` of the project |
//!
//! Dates are resolved by [`crate::resolve_date`]. A claim about the speaker, or made with "we", is
//! `first_party`; any other is `document`.

use lore_core::normalize::slug;
use lore_core::Ts;
use lore_ingest::{Bundle, ParticipantInput};
use serde_json::{json, Value};

use crate::dates::{month, resolve_date, weekday};
use crate::tokens::{sentences, words, Word};
use crate::{ExtractError, Extraction, Extractor};

/// The rules extractor; its id changes whenever its patterns change, so re-running a newer version adds
/// its own evidence instead of being skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct RulesExtractor;

pub const RULES_EXTRACTOR_ID: &str = "rules@1";

impl Extractor for RulesExtractor {
    fn id(&self) -> String {
        RULES_EXTRACTOR_ID.to_string()
    }

    fn extract(&self, bundle: &Bundle) -> Result<Extraction, ExtractError> {
        Ok(extract(bundle))
    }
}

/// Runs the patterns over every segment of a bundle.
pub fn extract(bundle: &Bundle) -> Extraction {
    // Capitalized words seen inside sentences: at a sentence's start capitalization says nothing, so a
    // project named there must also be named capitalized somewhere else in the meeting.
    let mut known_names = std::collections::BTreeSet::new();
    for segment in &bundle.segments {
        for (start, end) in sentences(&segment.text) {
            let sentence = &segment.text[start..end];
            if !sentence.chars().any(char::is_lowercase) {
                continue;
            }
            let ws = words(sentence);
            for pair in ws.windows(2) {
                if pair[1].capitalized && !pair[1].punct && !pair[0].punct {
                    known_names.insert(pair[1].norm.clone());
                }
            }
        }
    }
    let meeting = Meeting {
        participants: &bundle.participants,
        started_at: bundle.meeting.started_at,
        known_names,
    };
    let mut extraction = Extraction::default();
    let mut seen = std::collections::BTreeSet::new();
    for segment in &bundle.segments {
        let speaker = segment.speaker.as_deref().and_then(|label| {
            bundle
                .participants
                .iter()
                .position(|p| p.speaker_label.as_deref() == Some(label))
        });
        for (start, end) in sentences(&segment.text) {
            let sentence = &segment.text[start..end];
            for found in sentence_candidates(&meeting, speaker, sentence) {
                let evidence = json!({"segment_ids": [segment.id], "quote": sentence});
                let (kind, mut value) = match found {
                    Found::Claim(claim) => ("claim", claim.to_json(&meeting)),
                    Found::Task(task) => ("task", task.to_json(&meeting)),
                };
                value["evidence"] = evidence;
                if !seen.insert(value.to_string()) {
                    continue;
                }
                if kind == "claim" {
                    extraction.claims.push(value);
                } else {
                    extraction.tasks.push(value);
                }
            }
        }
    }
    links(bundle, &mut extraction);
    extraction
}

/// A URL said in a sentence that names a project the meeting's other statements are about: a `has_link`
/// of that project (stored as a `url_only` resource link; Lore never claims to have read it).
fn links(bundle: &Bundle, extraction: &mut Extraction) {
    let mut projects: Vec<String> = extraction
        .claims
        .iter()
        .flat_map(|claim| ["subject", "object", "context"].map(|key| claim[key].clone()))
        .filter(|entity| entity["kind"] == "project")
        .filter_map(|entity| entity["name"].as_str().map(str::to_string))
        .collect();
    projects.sort();
    projects.dedup();
    for segment in &bundle.segments {
        for (start, end) in sentences(&segment.text) {
            let sentence = &segment.text[start..end];
            let lower = sentence.to_lowercase();
            let urls: Vec<&str> = sentence
                .split_whitespace()
                .map(|word| word.trim_end_matches(['.', ',', ')', ';', '!', '?', '"', '\'']))
                .filter(|word| word.starts_with("https://") || word.starts_with("http://"))
                .collect();
            for url in urls {
                for project in projects
                    .iter()
                    .filter(|p| lower.contains(&p.to_lowercase()))
                {
                    extraction.claims.push(json!({
                        "subject": {"kind": "project", "name": project},
                        "predicate": "has_link",
                        "value": url,
                        "authority": "document",
                        "confidence": 0.7,
                        "evidence": {"segment_ids": [segment.id], "quote": sentence},
                    }));
                }
            }
        }
    }
}

struct Meeting<'a> {
    participants: &'a [ParticipantInput],
    started_at: Ts,
    /// Lowercase capitalized words seen after another word in some sentence of the meeting.
    known_names: std::collections::BTreeSet<String>,
}

/// Who or what a candidate is about.
#[derive(Clone, Debug, PartialEq)]
enum Ref {
    /// A participant, by index.
    Person(usize),
    Project(String),
    Company(String, Option<String>),
}

impl Ref {
    fn to_json(&self, meeting: &Meeting) -> Value {
        match self {
            Ref::Person(index) => {
                let participant = &meeting.participants[*index];
                let mut value = json!({"kind": "person", "name": participant.display_name});
                if let Some(email) = &participant.email {
                    value["email"] = json!(email);
                }
                value
            }
            Ref::Project(name) => json!({"kind": "project", "name": name}),
            Ref::Company(name, domain) => {
                let mut value = json!({"kind": "company", "name": name});
                if let Some(domain) = domain {
                    value["domain"] = json!(domain);
                }
                value
            }
        }
    }
}

#[derive(Clone, Debug)]
struct ClaimFound {
    subject: Ref,
    predicate: &'static str,
    value: Option<String>,
    object: Option<Ref>,
    context: Option<Ref>,
    due_at: Option<Ts>,
    ends: bool,
    first_party: bool,
}

impl ClaimFound {
    fn new(subject: Ref, predicate: &'static str, first_party: bool) -> ClaimFound {
        ClaimFound {
            subject,
            predicate,
            value: None,
            object: None,
            context: None,
            due_at: None,
            ends: false,
            first_party,
        }
    }

    fn to_json(&self, meeting: &Meeting) -> Value {
        let mut value = json!({
            "subject": self.subject.to_json(meeting),
            "predicate": self.predicate,
            "authority": if self.first_party { "first_party" } else { "document" },
            "confidence": if self.first_party { 0.8 } else { 0.7 },
        });
        if let Some(text) = &self.value {
            value["value"] = json!(text);
        }
        if let Some(object) = &self.object {
            value["object"] = object.to_json(meeting);
        }
        if let Some(context) = &self.context {
            value["context"] = context.to_json(meeting);
        }
        if let Some(due_at) = self.due_at {
            value["due_at"] = json!(due_at.to_rfc3339());
        }
        if self.ends {
            value["ends"] = json!(true);
        }
        value
    }
}

#[derive(Clone, Debug)]
struct TaskFound {
    title: String,
    assignee: usize,
    due_at: Option<Ts>,
}

impl TaskFound {
    fn to_json(&self, meeting: &Meeting) -> Value {
        let mut value = json!({
            "title": self.title,
            "assignee": Ref::Person(self.assignee).to_json(meeting),
            "status": "open",
        });
        if let Some(due_at) = self.due_at {
            value["due_at"] = json!(due_at.to_rfc3339());
        }
        value
    }
}

enum Found {
    Claim(ClaimFound),
    Task(TaskFound),
}

const HEDGES: &[&str] = &[
    "if",
    "maybe",
    "might",
    "perhaps",
    "would",
    "could",
    "should",
    "unless",
    "whether",
    "probably",
    "think",
    "guess",
    "hope",
    "wish",
    "suppose",
    "rumor",
    "rumour",
    "supposedly",
    "apparently",
    "hypothetically",
    "imagine",
    "pretend",
];
const ADVERBS: &[&str] = &[
    "now",
    "also",
    "still",
    "officially",
    "just",
    "actually",
    "currently",
    "finally",
    "already",
    "formally",
    "personally",
    "basically",
    "really",
];
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "our", "their", "your", "his", "her", "my", "its",
];
/// Capitalized words that do not start a name.
const NOT_NAMES: &[&str] = &[
    "i",
    "the",
    "a",
    "an",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "this",
    "that",
    "okay",
    "ok",
    "so",
    "and",
    "but",
    "yes",
    "no",
    "yeah",
    "well",
    "hi",
    "hello",
    "thanks",
    "today",
    "tomorrow",
    "q1",
    "q2",
    "q3",
    "q4",
    "eod",
    "asap",
    "tbd",
    "our",
    "my",
    "their",
    "his",
    "her",
    "its",
    "team",
    "everyone",
    "everybody",
];
/// Last words of a job title.
const TITLE_HEADS: &[&str] = &[
    "engineer",
    "manager",
    "director",
    "lead",
    "head",
    "designer",
    "researcher",
    "scientist",
    "analyst",
    "officer",
    "president",
    "architect",
    "consultant",
    "developer",
    "expert",
    "intern",
    "coordinator",
    "specialist",
    "administrator",
    "vp",
    "cto",
    "ceo",
    "cfo",
    "coo",
    "cpo",
    "ciso",
    "founder",
    "co-founder",
    "cofounder",
    "recruiter",
    "counsel",
    "strategist",
    "editor",
    "writer",
    "advocate",
    "partner",
    "principal",
    "chair",
    "chairman",
    "chairwoman",
];
/// Heads that make a title on their own ("I'm a designer"); others need a modifier ("the lead" is not one).
const SINGLE_WORD_TITLES: &[&str] = &[
    "engineer",
    "designer",
    "researcher",
    "developer",
    "scientist",
    "analyst",
    "architect",
    "consultant",
    "intern",
    "cto",
    "ceo",
    "cfo",
    "coo",
    "cpo",
    "ciso",
    "founder",
    "co-founder",
    "cofounder",
    "recruiter",
    "strategist",
];
/// Words a title cannot contain.
const NOT_IN_TITLES: &[&str] = &[
    "at", "on", "for", "in", "of", "with", "and", "or", "since", "from", "to", "here", "now",
    "today", "going", "forward", "who", "that", "which", "one", "person", "guy", "only", "first",
    "last", "best", "worst", "big", "fan", "not", "very", "so", "too", "just", "also", "still",
];
/// Verbs that make "I'll ..." an action item. Meeting narration ("we'll look at", "I'll move on to",
/// "I'll present") is deliberately absent.
const ACTION_VERBS: &[&str] = &[
    "send",
    "email",
    "e-mail",
    "mail",
    "update",
    "write",
    "draft",
    "prepare",
    "review",
    "fix",
    "schedule",
    "share",
    "circulate",
    "file",
    "book",
    "organize",
    "organise",
    "investigate",
    "document",
    "deploy",
    "finish",
    "follow",
    "set",
    "migrate",
    "publish",
    "summarize",
    "summarise",
    "distribute",
    "finalize",
    "finalise",
    "deliver",
    "implement",
    "contact",
    "confirm",
    "benchmark",
    "upload",
    "reach",
    "ping",
    "rewrite",
    "clean",
    "switch",
];

fn is(word: Option<&Word>, options: &[&str]) -> bool {
    word.is_some_and(|w| !w.punct && options.contains(&w.norm.as_str()))
}

/// Consumes the word at `*j` when it is one of `options`.
fn eat(ws: &[Word], j: &mut usize, options: &[&str]) -> bool {
    if is(ws.get(*j), options) {
        *j += 1;
        true
    } else {
        false
    }
}

/// Consumes a sequence of words, all or nothing.
fn eat_seq(ws: &[Word], j: &mut usize, sequence: &[&str]) -> bool {
    let matched = sequence
        .iter()
        .enumerate()
        .all(|(offset, expected)| is(ws.get(*j + offset), &[expected]));
    if matched {
        *j += sequence.len();
    }
    matched
}

fn skip(ws: &[Word], j: &mut usize, options: &[&str]) {
    while eat(ws, j, options) {}
}

/// A capitalized name starting at `*j` (up to four words), cut verbatim from the sentence.
fn proper_name(sentence: &str, ws: &[Word], j: &mut usize) -> Option<String> {
    let starts_name = |w: &Word| {
        !w.punct
            && w.capitalized
            && !NOT_NAMES.contains(&w.norm.as_str())
            && weekday(&w.norm).is_none()
            && month(&w.norm).is_none()
            && w.norm.chars().any(char::is_alphabetic)
    };
    let first = ws.get(*j).filter(|w| starts_name(w))?;
    let mut last = *j;
    while last + 1 < ws.len()
        && last + 1 - *j < 4
        && starts_name(&ws[last + 1])
        && ws[last + 1].start != ws[last].start
    {
        last += 1;
    }
    // Contractions expand to two words of one token: never end a name inside one.
    let name = sentence[first.start..ws[last].end]
        .trim_end_matches("'s")
        .trim_end_matches("’s")
        .to_string();
    *j = last + 1;
    while *j < ws.len() && ws[*j].start == ws[last].start {
        *j += 1;
    }
    Some(name)
}

/// The participant a name at `*j` refers to: full display name, or a first name no other participant has.
fn participant_at(meeting: &Meeting, ws: &[Word], j: &mut usize) -> Option<usize> {
    let word = ws.get(*j)?;
    if word.punct || !word.capitalized {
        return None;
    }
    let mut best: Option<(usize, usize)> = None;
    for (index, participant) in meeting.participants.iter().enumerate() {
        let name_words: Vec<String> = participant
            .display_name
            .split_whitespace()
            .map(|w| w.to_lowercase())
            .collect();
        let full = name_words
            .iter()
            .enumerate()
            .all(|(offset, part)| is(ws.get(*j + offset), &[part.as_str()]));
        if full && name_words.len() > best.map_or(0, |(_, len)| len) {
            best = Some((index, name_words.len()));
        }
    }
    if best.is_none() {
        let first_names: Vec<usize> = meeting
            .participants
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.display_name
                    .split_whitespace()
                    .next()
                    .is_some_and(|first| first.to_lowercase() == word.norm)
            })
            .map(|(index, _)| index)
            .collect();
        if first_names.len() == 1 {
            best = Some((first_names[0], 1));
        }
    }
    let (index, length) = best?;
    *j += length;
    Some(index)
}

/// A project name at `*j`: optional determiner, a capitalized name that is no participant, and an optional
/// `project`/`team` word (dropped) or a kind word (`migration`, `beta`, ...) that belongs to the name.
fn project_at(meeting: &Meeting, sentence: &str, ws: &[Word], j: &mut usize) -> Option<String> {
    let mut k = *j;
    eat(ws, &mut k, &["the"]);
    let mut probe = k;
    if participant_at(meeting, ws, &mut probe).is_some() {
        return None;
    }
    let start = ws.get(k)?.start;
    let mut name = proper_name(sentence, ws, &mut k)?;
    if is(
        ws.get(k),
        &[
            "migration",
            "redesign",
            "rollout",
            "upgrade",
            "beta",
            "ga",
            "launch",
        ],
    ) {
        name = sentence[start..ws[k].end].to_string();
        k += 1;
    }
    eat(ws, &mut k, &["project", "team"]);
    *j = k;
    Some(name)
}

/// A job title at `*j`: one to five words ending in a title head; "head/vp/director of *Name*" continues.
fn title_at(sentence: &str, ws: &[Word], j: &mut usize) -> Option<String> {
    let start = *j;
    let mut end = None;
    let mut k = *j;
    while k < ws.len() && k - start < 5 {
        let w = &ws[k];
        if w.punct
            || NOT_IN_TITLES.contains(&w.norm.as_str())
            || DETERMINERS.contains(&w.norm.as_str())
            || !w.norm.chars().all(|c| c.is_alphabetic() || c == '-')
        {
            break;
        }
        if TITLE_HEADS.contains(&w.norm.as_str()) {
            end = Some(k);
        }
        k += 1;
    }
    let mut last = end?;
    if is(
        ws.get(last),
        &["head", "vp", "director", "chief", "president", "officer"],
    ) && is(ws.get(last + 1), &["of"])
        && ws.get(last + 2).is_some_and(|w| w.capitalized && !w.punct)
    {
        last += 2;
        while ws.get(last + 1).is_some_and(|w| w.capitalized && !w.punct) && last - start < 6 {
            last += 1;
        }
    }
    let n_words = last - start + 1;
    if n_words == 1 && !SINGLE_WORD_TITLES.contains(&ws[last].norm.as_str()) {
        return None;
    }
    *j = last + 1;
    // Spoken fillers are not part of a title ("the um Marketing Expert").
    let title: Vec<&str> = sentence[ws[start].start..ws[last].end]
        .split_whitespace()
        .filter(|word| !FILLERS.contains(&word.to_lowercase().as_str()))
        .collect();
    (!title.is_empty()).then(|| title.join(" "))
}

const FILLERS: &[&str] = &["uh", "um", "er", "erm", "ah", "hmm", "mm"];

/// A company at `*j`, with the domain of the subject's email when the names agree (`Acme`, `acme.com`).
fn company_at(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    j: &mut usize,
    subject: usize,
) -> Option<Ref> {
    let mut probe = *j;
    if participant_at(meeting, ws, &mut probe).is_some() {
        return None;
    }
    let name = proper_name(sentence, ws, j)?;
    let domain = meeting.participants[subject]
        .email
        .as_deref()
        .and_then(|email| email.split_once('@'))
        .map(|(_, domain)| domain.to_string())
        .filter(|domain| {
            domain
                .split('.')
                .next()
                .is_some_and(|label| slug(label) == slug(&name))
        });
    Some(Ref::Company(name, domain))
}

/// A date after `by`, `on`, `before` or `due` at `*j`.
fn date_at(meeting: &Meeting, ws: &[Word], j: &mut usize) -> Option<Ts> {
    let mut k = *j;
    if !eat(ws, &mut k, &["by", "on", "before", "until"]) {
        return None;
    }
    let norms: Vec<&str> = ws[k..]
        .iter()
        .filter(|w| !w.punct || w.norm == ",")
        .map(|w| w.norm.as_str())
        .collect();
    let (due, used) = resolve_date(&norms, meeting.started_at)?;
    // Advance over the words the date used (commas inside it included).
    let mut consumed = 0;
    while k < ws.len() && consumed < used {
        if !ws[k].punct || ws[k].norm == "," {
            consumed += 1;
        }
        k += 1;
    }
    *j = k;
    Some(due)
}

/// The end of a clause: end of sentence, punctuation, or a word that starts a new clause.
fn clause_ends(ws: &[Word], j: usize) -> bool {
    match ws.get(j) {
        None => true,
        Some(w) => {
            w.punct
                || matches!(
                    w.norm.as_str(),
                    "and"
                        | "but"
                        | "so"
                        | "because"
                        | "since"
                        | "as"
                        | "now"
                        | "here"
                        | "today"
                        | "going"
                        | "effective"
                        | "starting"
                        | "from"
                        | "through"
                        | "until"
                        | "for"
                        | "this"
                        | "these"
                        | "next"
                        | "last"
                        | "in"
                        | "after"
                        | "then"
                        | "again"
                        | "at"
                        | "by"
                        | "on"
                        | "with"
                        | "to"
                        | "recently"
                        | "full-time"
                        | "part-time"
                        | "yesterday"
                        | "tomorrow"
                        | "soon"
                        | "end"
                        | "entirely"
                        | "alone"
                )
        }
    }
}

fn sentence_candidates(meeting: &Meeting, speaker: Option<usize>, sentence: &str) -> Vec<Found> {
    // Broadcast captions in capitals carry no reliable names.
    if !sentence.chars().any(char::is_lowercase) {
        return Vec::new();
    }
    let ws = words(sentence);
    let question = sentence.trim_end().ends_with('?');
    let hedged = ws.iter().any(|w| HEDGES.contains(&w.norm.as_str()));
    let negated = ws
        .iter()
        .any(|w| matches!(w.norm.as_str(), "not" | "never" | "nobody" | "nothing"));
    if hedged {
        return Vec::new();
    }
    // "Alice, you're ..." / "Alice, can you ...".
    let mut vocative = None;
    let mut j = 0;
    skip(
        &ws,
        &mut j,
        &[
            "so", "and", "okay", "ok", "well", "perfect", "great", "right",
        ],
    );
    let comma = |index: usize| ws.get(index).is_some_and(|w| w.punct && w.norm == ",");
    while comma(j) {
        j += 1;
    }
    let mut probe = j;
    if let Some(person) = participant_at(meeting, &ws, &mut probe) {
        if comma(probe) {
            vocative = Some(person);
        }
    }
    let mut found = Vec::new();
    if question {
        if let Some(person) = vocative {
            request(meeting, sentence, &ws, person, &mut found);
        }
        return found;
    }
    let speaker_is = |person: usize| speaker == Some(person);
    for i in 0..ws.len() {
        // Subjects start a sentence or follow a comma or a joining word.
        let at_clause_start = i == 0
            || ws[i - 1].punct
            || matches!(
                ws[i - 1].norm.as_str(),
                "and" | "so" | "but" | "officially" | "yeah" | "okay" | "now" | "because" | "then"
            );
        if !at_clause_start {
            continue;
        }
        let mut j = i;
        let subject = if eat(&ws, &mut j, &["i"]) {
            speaker.map(Ref::Person)
        } else if eat(&ws, &mut j, &["you"]) {
            vocative.map(Ref::Person)
        } else if eat(&ws, &mut j, &["we"]) {
            if let Some(speaker) = speaker {
                we_statements(meeting, sentence, &ws, j, speaker, negated, &mut found);
            }
            continue;
        } else if eat(&ws, &mut j, &["my"]) {
            if let Some(speaker) = speaker {
                possessive(meeting, sentence, &ws, j, speaker, negated, &mut found);
            }
            continue;
        } else if let Some(person) = participant_at(meeting, &ws, &mut j) {
            Some(Ref::Person(person))
        } else {
            let mut k = j;
            let named_elsewhere = |k: usize| {
                let first = if is(ws.get(k), &["the"]) { k + 1 } else { k };
                ws.get(first)
                    .is_some_and(|w| meeting.known_names.contains(&w.norm))
            };
            if named_elsewhere(k) {
                if let Some(project) = project_at(meeting, sentence, &ws, &mut k) {
                    project_statements(meeting, &ws, k, &project, &mut found);
                }
            }
            let mut k = i;
            if eat_seq(&ws, &mut k, &["the", "deadline", "for"]) {
                if let Some(project) = project_at(meeting, sentence, &ws, &mut k) {
                    if eat(&ws, &mut k, &["is"]) {
                        let norms: Vec<&str> = ws[k..]
                            .iter()
                            .filter(|w| !w.punct || w.norm == ",")
                            .map(|w| w.norm.as_str())
                            .collect();
                        if let Some((due, _)) = resolve_date(&norms, meeting.started_at) {
                            let first_party = false;
                            deadline(&project, "deadline", due, first_party, &mut found);
                        }
                    }
                }
            }
            continue;
        };
        let Some(Ref::Person(person)) = subject else {
            continue;
        };
        person_statements(
            meeting,
            sentence,
            &ws,
            j,
            person,
            speaker_is(person),
            negated,
            &mut found,
        );
    }
    found
}

/// Statements whose subject is a participant, from the word after the subject.
#[allow(clippy::too_many_arguments)]
fn person_statements(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut j: usize,
    person: usize,
    first_party: bool,
    negated: bool,
    found: &mut Vec<Found>,
) {
    let claim =
        |predicate: &'static str| ClaimFound::new(Ref::Person(person), predicate, first_party);
    let project_claim =
        |project: String| ClaimFound::new(Ref::Project(project), "led_by_person", first_party);
    skip(ws, &mut j, ADVERBS);
    if eat(ws, &mut j, &["am", "is", "are"]) {
        skip(ws, &mut j, ADVERBS);
        if eat_seq(ws, &mut j, &["no", "longer"]) {
            // "I'm no longer the owner of / leading / working on X": a termination.
            let (predicate, mut k) = if eat_seq(ws, &mut j, &["the", "owner", "of"])
                || eat_seq(ws, &mut j, &["owning"])
            {
                ("owns_project", j)
            } else if eat(ws, &mut j, &["leading", "heading", "running"])
                || eat_seq(ws, &mut j, &["the", "lead", "on"])
            {
                ("led_by_person", j)
            } else if eat_seq(ws, &mut j, &["working", "on"])
                || eat_seq(ws, &mut j, &["contributing", "to"])
            {
                ("contributes_to", j)
            } else {
                return;
            };
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let mut ended = if predicate == "led_by_person" {
                    let mut c = project_claim(project);
                    c.object = Some(Ref::Person(person));
                    c
                } else {
                    let mut c = claim(predicate);
                    c.object = Some(Ref::Project(project));
                    c
                };
                ended.ends = true;
                found.push(Found::Claim(ended));
            }
            return;
        }
        if negated {
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["leading", "heading", "running"]) {
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let mut c = project_claim(project);
                c.object = Some(Ref::Person(person));
                found.push(Found::Claim(c));
            }
            return;
        }
        let mut k = j;
        if eat_seq(ws, &mut k, &["the", "lead", "on"])
            || eat_seq(ws, &mut k, &["the", "lead", "for"])
        {
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let mut c = project_claim(project);
                c.object = Some(Ref::Person(person));
                found.push(Found::Claim(c));
            }
            return;
        }
        let mut k = j;
        let taking = eat(ws, &mut k, &["taking"])
            && (eat_seq(ws, &mut k, &["over", "ownership", "of"])
                || eat_seq(ws, &mut k, &["ownership", "of"])
                || eat(ws, &mut k, &["over"]));
        if !taking {
            k = j;
        }
        if taking || eat_seq(ws, &mut k, &["the", "owner", "of"]) {
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let mut c = claim("owns_project");
                c.object = Some(Ref::Project(project));
                found.push(Found::Claim(c));
            }
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["handing"]) {
            hand_off(meeting, sentence, ws, k, person, first_party, found);
            return;
        }
        let mut k = j;
        if eat_seq(ws, &mut k, &["contributing", "to"])
            || eat_seq(ws, &mut k, &["working", "on"])
            || eat_seq(ws, &mut k, &["helping", "on"])
            || eat_seq(ws, &mut k, &["helping", "with"])
        {
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let mut c = claim("contributes_to");
                c.object = Some(Ref::Project(project));
                found.push(Found::Claim(c));
            }
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["based", "located", "living"]) && eat(ws, &mut k, &["in"]) {
            place(meeting, sentence, ws, k, claim("located_in"), found);
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["moving", "relocating"]) && eat(ws, &mut k, &["to"]) {
            place(meeting, sentence, ws, k, claim("located_in"), found);
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["joining", "leaving"]) {
            let leaving = ws[k - 1].norm == "leaving";
            if let Some(company) = company_at(meeting, sentence, ws, &mut k, person) {
                if clause_ends(ws, k) {
                    let mut c = claim("works_at");
                    c.object = Some(company);
                    c.ends = leaving;
                    found.push(Found::Claim(c));
                }
            }
            return;
        }
        let mut k = j;
        if eat(ws, &mut k, &["working"]) && eat(ws, &mut k, &["at", "for"]) {
            works_at(meeting, sentence, ws, k, person, claim("works_at"), found);
            return;
        }
        // A title.
        let mut k = j;
        skip(ws, &mut k, DETERMINERS);
        eat(ws, &mut k, &["new"]);
        if let Some(title) = title_at(sentence, ws, &mut k) {
            let mut after = k;
            if eat(ws, &mut after, &["on", "for"]) {
                if let Some(project) = project_at(meeting, sentence, ws, &mut after) {
                    let mut c = claim("has_role");
                    c.value = Some(title);
                    c.context = Some(Ref::Project(project));
                    found.push(Found::Claim(c));
                }
                return;
            }
            let mut after_at = k;
            if eat(ws, &mut after_at, &["at", "with"]) {
                if let Some(company) = company_at(meeting, sentence, ws, &mut after_at, person) {
                    if clause_ends(ws, after_at) {
                        let mut c = claim("has_title");
                        c.value = Some(title);
                        found.push(Found::Claim(c));
                        let mut c = claim("works_at");
                        c.object = Some(company);
                        found.push(Found::Claim(c));
                    }
                }
                return;
            }
            if clause_ends(ws, k) && !is(ws.get(k), &["for", "in", "from"]) {
                let mut c = claim("has_title");
                c.value = Some(title);
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    if negated {
        return;
    }
    // Verbs, possibly after "will", "am going to", "have", "was".
    let future = eat(ws, &mut j, &["will"])
        || eat_seq(ws, &mut j, &["am", "going", "to"])
        || eat_seq(ws, &mut j, &["is", "going", "to"]);
    let perfect = !future && eat(ws, &mut j, &["have", "has"]);
    skip(ws, &mut j, ADVERBS);
    let mut k = j;
    if (eat_seq(ws, &mut k, &["was", "promoted", "to"])
        || eat_seq(ws, &mut k, &["got", "promoted", "to"])
        || eat_seq(ws, &mut k, &["been", "promoted", "to"]))
        && !future
    {
        skip(ws, &mut k, DETERMINERS);
        if let Some(title) = title_at(sentence, ws, &mut k) {
            let mut c = claim("has_title");
            c.value = Some(title);
            found.push(Found::Claim(c));
        }
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["lead", "leads"]) {
        if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
            if clause_ends(ws, k) {
                let mut c = project_claim(project);
                c.object = Some(Ref::Person(person));
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["own", "owns"])
        || eat_seq(ws, &mut k, &["take", "over", "ownership", "of"])
        || eat_seq(ws, &mut k, &["take", "ownership", "of"])
        || eat_seq(ws, &mut k, &["take", "over"])
        || eat_seq(ws, &mut k, &["took", "over"])
    {
        if let Some(project) =
            project_at(meeting, sentence, ws, &mut k).filter(|_| clause_ends(ws, k))
        {
            let mut c = claim("owns_project");
            c.object = Some(Ref::Project(project));
            found.push(Found::Claim(c));
        }
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["hand", "handed"]) {
        hand_off(meeting, sentence, ws, k, person, first_party, found);
        return;
    }
    let mut k = j;
    if eat_seq(ws, &mut k, &["contribute", "to"])
        || eat_seq(ws, &mut k, &["contributes", "to"])
        || eat_seq(ws, &mut k, &["work", "on"])
        || eat_seq(ws, &mut k, &["works", "on"])
    {
        if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
            let mut c = claim("contributes_to");
            c.object = Some(Ref::Project(project));
            found.push(Found::Claim(c));
        }
        return;
    }
    let mut k = j;
    if (eat(ws, &mut k, &["work", "works"]) && eat(ws, &mut k, &["at", "for"])) && !perfect {
        works_at(meeting, sentence, ws, k, person, claim("works_at"), found);
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["joined", "join", "left", "leave", "quit"]) {
        let leaving = matches!(ws[k - 1].norm.as_str(), "left" | "leave" | "quit");
        let mut team = k;
        if !leaving && eat(ws, &mut team, &["the"]) {
            if let Some(project) = project_at(meeting, sentence, ws, &mut team) {
                if ws[team - 1].norm == "team" {
                    let mut c = claim("contributes_to");
                    c.object = Some(Ref::Project(project));
                    found.push(Found::Claim(c));
                    return;
                }
            }
        }
        if let Some(company) = company_at(meeting, sentence, ws, &mut k, person) {
            if clause_ends(ws, k) {
                let mut c = claim("works_at");
                c.object = Some(company);
                c.ends = leaving;
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["live", "lives"]) && eat(ws, &mut k, &["in"]) {
        place(meeting, sentence, ws, k, claim("located_in"), found);
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["moved", "move", "relocated", "relocate"]) && eat(ws, &mut k, &["to"]) {
        place(meeting, sentence, ws, k, claim("located_in"), found);
        return;
    }
    let mut k = j;
    if eat(ws, &mut k, &["report", "reports"]) && eat(ws, &mut k, &["to"]) {
        if let Some(manager) = participant_at(meeting, ws, &mut k) {
            if manager != person && clause_ends(ws, k) {
                let mut c = claim("reports_to");
                c.object = Some(Ref::Person(manager));
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    if future {
        task(meeting, sentence, ws, j, person, found);
    }
}

/// "handing/handed X off/over to Person" or "handed off X to Person".
fn hand_off(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut k: usize,
    person: usize,
    first_party: bool,
    found: &mut Vec<Found>,
) {
    let early_particle = eat(ws, &mut k, &["off", "over"]);
    let Some(project) = project_at(meeting, sentence, ws, &mut k) else {
        return;
    };
    if !early_particle && !eat(ws, &mut k, &["off", "over"]) {
        return;
    }
    if !eat(ws, &mut k, &["to"]) {
        return;
    }
    let Some(receiver) = participant_at(meeting, ws, &mut k) else {
        return;
    };
    if receiver == person {
        return;
    }
    let mut ended = ClaimFound::new(Ref::Person(person), "owns_project", first_party);
    ended.object = Some(Ref::Project(project.clone()));
    ended.ends = true;
    found.push(Found::Claim(ended));
    let mut started = ClaimFound::new(Ref::Person(receiver), "owns_project", false);
    started.object = Some(Ref::Project(project));
    found.push(Found::Claim(started));
}

fn place(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut k: usize,
    mut claim: ClaimFound,
    found: &mut Vec<Found>,
) {
    let mut probe = k;
    if participant_at(meeting, ws, &mut probe).is_some() {
        return;
    }
    if let Some(name) = proper_name(sentence, ws, &mut k) {
        if clause_ends(ws, k) {
            claim.value = Some(name);
            found.push(Found::Claim(claim));
        }
    }
}

fn works_at(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut k: usize,
    person: usize,
    mut claim: ClaimFound,
    found: &mut Vec<Found>,
) {
    if let Some(company) = company_at(meeting, sentence, ws, &mut k, person) {
        if clause_ends(ws, k) {
            claim.object = Some(company);
            found.push(Found::Claim(claim));
        }
    }
}

/// "my (new) title/role is X", "my last day at X".
fn possessive(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut j: usize,
    speaker: usize,
    negated: bool,
    found: &mut Vec<Found>,
) {
    if negated {
        return;
    }
    eat(ws, &mut j, &["new"]);
    let mut k = j;
    if (eat_seq(ws, &mut k, &["job", "title"]) || eat(ws, &mut k, &["title", "role", "position"]))
        && eat(ws, &mut k, &["is"])
    {
        skip(ws, &mut k, DETERMINERS);
        if let Some(title) = title_at(sentence, ws, &mut k) {
            if clause_ends(ws, k) {
                let mut c = ClaimFound::new(Ref::Person(speaker), "has_title", true);
                c.value = Some(title);
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    let mut k = j;
    if eat_seq(ws, &mut k, &["last", "day", "at"]) {
        if let Some(company) = company_at(meeting, sentence, ws, &mut k, speaker) {
            let mut c = ClaimFound::new(Ref::Person(speaker), "works_at", true);
            c.object = Some(company);
            c.ends = true;
            found.push(Found::Claim(c));
        }
    }
}

/// Maps a status word (after "is", "has been", or as a verb after "we") to the stored status.
fn status_word(ws: &[Word], k: &mut usize) -> Option<&'static str> {
    let word = ws.get(*k).filter(|w| !w.punct)?;
    let (status, used) = match word.norm.as_str() {
        "canceled" | "cancelled" | "killed" | "shelved" | "scrapped" => ("canceled", 1),
        "shipped" | "launched" | "released" | "live" => ("shipped", 1),
        "paused" => ("on hold", 1),
        "blocked" => ("blocked", 1),
        "delayed" => ("delayed", 1),
        "done" | "complete" | "completed" | "finished" => ("completed", 1),
        "on" if is(ws.get(*k + 1), &["hold"]) => ("on hold", 2),
        "on" if is(ws.get(*k + 1), &["track"]) => ("on track", 2),
        "at" if is(ws.get(*k + 1), &["risk"]) => ("at risk", 2),
        "in" if is(ws.get(*k + 1), &["beta"]) => ("in beta", 2),
        _ => return None,
    };
    *k += used;
    Some(status)
}

/// "Atlas is on hold", "Atlas has been canceled", "Atlas shipped", "Atlas ships by Friday".
fn project_statements(
    meeting: &Meeting,
    ws: &[Word],
    mut k: usize,
    project: &str,
    found: &mut Vec<Found>,
) {
    if ws
        .iter()
        .any(|w| matches!(w.norm.as_str(), "not" | "never"))
    {
        return;
    }
    let start = k;
    if eat(ws, &mut k, &["is", "was", "got"])
        || eat_seq(ws, &mut k, &["has", "been"])
        || eat(ws, &mut k, &["has"])
    {
        skip(ws, &mut k, ADVERBS);
        let mut due = k;
        if eat(ws, &mut due, &["due"]) {
            if let Some(date) = date_at(meeting, ws, &mut due).or_else(|| {
                // "is due Friday".
                let norms: Vec<&str> = ws[due..]
                    .iter()
                    .filter(|w| !w.punct)
                    .map(|w| w.norm.as_str())
                    .collect();
                resolve_date(&norms, meeting.started_at).map(|(date, _)| date)
            }) {
                deadline(project, "delivery", date, false, found);
            }
            return;
        }
        if let Some(status) = status_word(ws, &mut k) {
            if clause_ends(ws, k) && date_at(meeting, ws, &mut k.clone()).is_none() {
                let mut c = ClaimFound::new(Ref::Project(project.to_string()), "has_status", false);
                c.value = Some(status.to_string());
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    k = start;
    let event = if eat(ws, &mut k, &["ships", "launches", "releases"]) {
        Some("launch")
    } else if eat(ws, &mut k, &["will"]) {
        if eat(ws, &mut k, &["ship", "launch", "release"]) || eat_seq(ws, &mut k, &["go", "live"]) {
            Some("launch")
        } else if eat_seq(ws, &mut k, &["be", "done"]) || eat_seq(ws, &mut k, &["be", "ready"]) {
            Some("delivery")
        } else {
            None
        }
    } else if eat_seq(ws, &mut k, &["goes", "live"]) {
        Some("launch")
    } else {
        None
    };
    if let Some(event) = event {
        if let Some(date) = date_at(meeting, ws, &mut k) {
            deadline(project, event, date, false, found);
        }
        return;
    }
    k = start;
    if let Some(status) = status_word(ws, &mut k) {
        if matches!(status, "shipped" | "canceled") && clause_ends(ws, k) {
            let mut c = ClaimFound::new(Ref::Project(project.to_string()), "has_status", false);
            c.value = Some(status.to_string());
            found.push(Found::Claim(c));
        }
    }
}

fn deadline(project: &str, event: &str, due: Ts, first_party: bool, found: &mut Vec<Found>) {
    let mut c = ClaimFound::new(
        Ref::Project(project.to_string()),
        "has_deadline",
        first_party,
    );
    c.value = Some(format!("{project} {event}"));
    c.due_at = Some(due);
    found.push(Found::Claim(c));
}

/// "we canceled X", "we shipped the X beta", "we're putting X on hold", "we'll ship X by Friday", "we'll
/// send the notes": spoken for the team, attributed to the speaker.
fn we_statements(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    mut j: usize,
    speaker: usize,
    negated: bool,
    found: &mut Vec<Found>,
) {
    if negated {
        return;
    }
    let future = eat(ws, &mut j, &["will"]) || eat_seq(ws, &mut j, &["are", "going", "to"]);
    if !future {
        eat(ws, &mut j, &["have", "are"]);
    }
    skip(ws, &mut j, ADVERBS);
    let mut k = j;
    if eat(ws, &mut k, &["putting", "put"]) {
        if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
            if eat_seq(ws, &mut k, &["on", "hold"]) {
                let mut c = ClaimFound::new(Ref::Project(project), "has_status", true);
                c.value = Some("on hold".into());
                found.push(Found::Claim(c));
            }
        }
        return;
    }
    let mut k = j;
    if future {
        if eat(
            ws,
            &mut k,
            &["ship", "launch", "release", "deliver", "finish"],
        ) {
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let event = if matches!(ws[j].norm.as_str(), "deliver" | "finish") {
                    "delivery"
                } else {
                    "launch"
                };
                if let Some(date) = date_at(meeting, ws, &mut k) {
                    deadline(&project, event, date, true, found);
                }
                return;
            }
        }
        // "We'll ..." is a team's intention: an action item only with a date.
        let mut dated = Vec::new();
        task(meeting, sentence, ws, j, speaker, &mut dated);
        found.extend(
            dated
                .into_iter()
                .filter(|f| matches!(f, Found::Task(t) if t.due_at.is_some())),
        );
        return;
    }
    let mut k = j;
    if let Some(status) = status_word(ws, &mut k) {
        if matches!(status, "canceled" | "shipped" | "on hold") {
            let verb_end = k;
            if let Some(project) = project_at(meeting, sentence, ws, &mut k) {
                let _ = verb_end;
                let in_beta = status == "shipped" && ws[k - 1].norm == "beta";
                let project = if in_beta {
                    project
                        .trim_end_matches(" beta")
                        .trim_end_matches(" Beta")
                        .to_string()
                } else {
                    project
                };
                let mut c = ClaimFound::new(Ref::Project(project), "has_status", true);
                c.value = Some(if in_beta { "in beta" } else { status }.to_string());
                found.push(Found::Claim(c));
            }
        }
    }
}

/// A task: an action verb after "will"; its title runs to the end of the clause, minus a trailing date.
fn task(
    meeting: &Meeting,
    sentence: &str,
    ws: &[Word],
    j: usize,
    assignee: usize,
    found: &mut Vec<Found>,
) {
    let Some(verb) = ws
        .get(j)
        .filter(|w| ACTION_VERBS.contains(&w.norm.as_str()))
    else {
        return;
    };
    let mut end = j + 1;
    let mut due = None;
    while end < ws.len() && !(ws[end].punct && ws[end].norm != "-" && ws[end].norm != "'") {
        let mut k = end;
        if let Some(date) = date_at(meeting, ws, &mut k) {
            due = Some(date);
            break;
        }
        end += 1;
    }
    // "I'll send it" names nothing to do without the sentences around it.
    let says_what = ws[j + 1..end].iter().any(|w| {
        !w.punct
            && !matches!(
                w.norm.as_str(),
                "it" | "that"
                    | "this"
                    | "them"
                    | "those"
                    | "these"
                    | "up"
                    | "out"
                    | "over"
                    | "on"
                    | "off"
                    | "back"
                    | "you"
                    | "me"
                    | "us"
                    | "again"
                    | "now"
                    | "later"
            )
    });
    if !says_what {
        return;
    }
    let title = sentence[verb.start..ws[end - 1].end].to_string();
    found.push(Found::Task(TaskFound {
        title,
        assignee,
        due_at: due,
    }));
}

/// "Alice, can you send the deck by Friday?": a task for Alice.
fn request(meeting: &Meeting, sentence: &str, ws: &[Word], person: usize, found: &mut Vec<Found>) {
    let Some(position) = ws
        .windows(2)
        .position(|pair| matches!(pair[0].norm.as_str(), "can" | "could") && pair[1].norm == "you")
    else {
        return;
    };
    let mut j = position + 2;
    skip(ws, &mut j, &["please", "also"]);
    task(meeting, sentence, ws, j, person, found);
}
