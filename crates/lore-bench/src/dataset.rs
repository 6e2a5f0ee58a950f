//! A deterministic synthetic dataset shaped like the seed's: at scale 1, 1,000 meetings of 100
//! segments, ~2,000 entities with a few hubs, ~10,000 claims (single-valued slots that change over
//! time, multi-valued memberships, deadlines), ~25,000 evidence rows and ~3,000 resource links.
//!
//! A larger scale is `scale` blocks of the scale-1 population: a person's employer, projects and
//! concepts, and a project's lead, are chosen (with the same skew) within the block of the entity
//! that refers to them, and a block's statements are made in meetings of its own (the blocks'
//! meetings interleave over one timeline). So every scale has the same degree distribution (hubs of
//! a few hundred claims, median degree about 5, the same meetings per entity) and only the database
//! around the neighborhoods grows, which is what the growth bound on per-entity reads is about.

use serde_json::{json, Value};

/// A small, fast, reproducible generator (PCG-style LCG); the same seed gives the same dataset.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 11
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound.max(1) as u64) as usize
    }

    /// Skewed choice: low indexes are much more likely (a few hubs, a long tail).
    pub fn skewed(&mut self, bound: usize) -> usize {
        let uniform = (self.next_u64() % 1_000_000) as f64 / 1_000_000.0;
        ((uniform.powi(3)) * bound as f64) as usize % bound.max(1)
    }
}

pub const WORDS: &[&str] = &[
    "atlas",
    "roadmap",
    "latency",
    "budget",
    "customer",
    "pipeline",
    "search",
    "index",
    "migration",
    "review",
    "launch",
    "pricing",
    "metrics",
    "design",
    "rollout",
    "feedback",
    "incident",
    "capacity",
    "schema",
    "quarter",
    "hiring",
    "contract",
    "security",
    "audit",
    "cache",
    "vector",
    "ranking",
    "onboarding",
    "renewal",
    "storage",
];

/// The scale-1 population: people, companies, projects and concepts (one block).
const BLOCK: (usize, usize, usize, usize) = (1_000, 200, 500, 300);
/// Meetings per block: a block's statements are spread over meetings of its own.
pub const BLOCK_MEETINGS: usize = 1_000;

/// The block an entity of the dataset belongs to, from its kind and name ("Person 1234" is person
/// 1234, in block 1 at every scale); `None` for a name the generator does not make.
pub fn block_of(kind: lore_core::EntityKind, name: &str) -> Option<usize> {
    let (prefix, size) = match kind {
        lore_core::EntityKind::Person => ("Person ", BLOCK.0),
        lore_core::EntityKind::Company => ("Company ", BLOCK.1),
        lore_core::EntityKind::Project => ("Project ", BLOCK.2),
        lore_core::EntityKind::Concept => ("Concept ", BLOCK.3),
    };
    let index: usize = name.strip_prefix(prefix)?.parse().ok()?;
    Some(index / size)
}

/// Meeting `i` starts at `FIRST_MEETING_MS + i * meeting_spacing_ms(scale)` (from 2026-01-01).
pub const FIRST_MEETING_MS: i64 = 1_767_225_600_000;
const MEETING_SPACING_MS: i64 = 6 * 3_600_000;

/// Every six hours at scale 1 and `scale` times as often at larger scales, so that every scale spans
/// the same 250 days (all in the past of a reading today): weights decay and time travel reads the
/// same span whatever the size, and no observation lies in the future of the reading.
pub fn meeting_spacing_ms(scale: usize) -> i64 {
    MEETING_SPACING_MS / scale.max(1) as i64
}

const TITLES: &[&str] = &[
    "Engineer",
    "Senior Engineer",
    "Staff Engineer",
    "Principal Engineer",
    "Manager",
    "Director",
];
const CITIES: &[&str] = &[
    "Lisbon", "Berlin", "Porto", "Madrid", "Paris", "Oslo", "Austin", "Toronto",
];
const STATUSES: &[&str] = &[
    "planning",
    "in progress",
    "at risk",
    "on track",
    "shipped",
    "on hold",
];
const SKILLS: &[&str] = &[
    "rust", "sql", "design", "sales", "ml", "ops", "writing", "research",
];

/// A fact as the meetings state it: the claim (its JSON text, a tenth of the memory of its
/// `Value`), the sentence that says it, and who says it.
struct Fact {
    claim: Box<str>,
    text: Box<str>,
    speaker: usize,
}

/// The generated population: its facts and in which meetings each is stated. The meetings' bundles
/// are made from it one at a time (`Dataset::bundles`), so that a large scale never holds them all:
/// at scale 100 their text is gigabytes.
pub struct Dataset {
    facts: Vec<Fact>,
    /// (meeting, fact) in meeting order; a meeting's statements in the order they were drawn.
    mentions: Vec<(u32, u32)>,
    /// The generator's state after the facts: the filler segments' words are drawn from it, meeting
    /// after meeting, so every pass over the bundles gives the same text.
    filler: Rng,
    scale: usize,
    pub meetings: usize,
    pub people: usize,
    pub companies: usize,
    pub projects: usize,
    pub concepts: usize,
    pub segments: usize,
}

fn person(index: usize) -> Value {
    json!({"kind": "person", "name": format!("Person {index}"), "email": format!("person{index}@corp{}.example", index % 97)})
}

fn company(index: usize) -> Value {
    json!({"kind": "company", "name": format!("Company {index}"), "domain": format!("company{index}.example")})
}

fn project(index: usize) -> Value {
    json!({"kind": "project", "name": format!("Project {index}"), "key": format!("project-{index}")})
}

fn concept(index: usize) -> Value {
    json!({"kind": "concept", "name": format!("Concept {index}"), "key": format!("concept-{index}")})
}

/// Generates the meeting bundles (as JSON text, ingested through the ordinary path) for `scale`.
pub fn generate(scale: usize) -> Dataset {
    let scale = scale.max(1);
    let meetings = BLOCK_MEETINGS * scale;
    let (people, companies, projects, concepts) = (
        BLOCK.0 * scale,
        BLOCK.1 * scale,
        BLOCK.2 * scale,
        BLOCK.3 * scale,
    );
    // A skewed choice of one of the `size` entities of a kind in block `block`.
    let in_block = |rng: &mut Rng, block: usize, size: usize| block * size + rng.skewed(size);
    let mut rng = Rng::new(42 + scale as u64);
    let mut facts: Vec<Fact> = Vec::new();
    let mut mentions: Vec<(u32, u32)> = Vec::new();

    // Spreads a fact's statements over its block's meetings inside its window [from, to) (numbered
    // within the block; the block's `i`th meeting is meeting `i * scale + block`, so every block's
    // meetings span the whole timeline). `times` is (at least, plus up to spread - 1 more).
    let mut state = |rng: &mut Rng,
                     block: usize,
                     from: usize,
                     to: usize,
                     times: (usize, usize),
                     claim: Value,
                     text: String,
                     speaker: usize| {
        let width = to.saturating_sub(from).max(1);
        let count = times.0 + rng.below(times.1);
        let fact = u32::try_from(facts.len()).expect("facts fit in u32");
        facts.push(Fact {
            claim: claim.to_string().into(),
            text: text.into(),
            speaker,
        });
        for _ in 0..count {
            let meeting = (from + rng.below(width)) * scale + block;
            mentions.push((u32::try_from(meeting).expect("meetings fit in u32"), fact));
        }
    };

    for p in 0..people {
        let block = p / BLOCK.0;
        // Single-valued slots that change over time: each new value supersedes the previous one.
        for (predicate, values, changes) in [
            ("has_title", TITLES, 1 + rng.below(4)),
            ("located_in", CITIES, 1 + rng.below(2)),
        ] {
            let start = rng.below(values.len());
            for step in 0..changes {
                let value = values[(start + step) % values.len()];
                let (from, to) = (
                    BLOCK_MEETINGS * step / changes,
                    BLOCK_MEETINGS * (step + 1) / changes,
                );
                let claim = json!({"subject": person(p), "predicate": predicate, "value": value, "authority": "first_party"});
                let text = format!("Person {p} here: my {predicate} is {value} now.");
                state(&mut rng, block, from, to, (2, 3), claim, text, p);
            }
        }
        let works_at = in_block(&mut rng, block, BLOCK.1);
        let claim = json!({"subject": person(p), "predicate": "works_at", "object": company(works_at), "authority": "first_party"});
        state(
            &mut rng,
            block,
            0,
            BLOCK_MEETINGS,
            (2, 2),
            claim,
            format!("I work at Company {works_at}."),
            p,
        );
        for _ in 0..2 {
            let project_index = in_block(&mut rng, block, BLOCK.2);
            let claim = json!({"subject": person(p), "predicate": "contributes_to", "object": project(project_index), "authority": "first_party"});
            state(
                &mut rng,
                block,
                0,
                BLOCK_MEETINGS,
                (2, 3),
                claim,
                format!("I contribute to Project {project_index}."),
                p,
            );
        }
        let skill = SKILLS[rng.below(SKILLS.len())];
        let claim = json!({"subject": person(p), "predicate": "has_skill", "value": skill, "authority": "document"});
        state(
            &mut rng,
            block,
            0,
            BLOCK_MEETINGS,
            (2, 2),
            claim,
            format!("Person {p} is good at {skill}."),
            (p + 1) % people,
        );
        if rng.below(3) == 0 {
            let concept_index = in_block(&mut rng, block, BLOCK.3);
            let claim = json!({"subject": person(p), "predicate": "focuses_on_concept", "object": concept(concept_index), "authority": "first_party"});
            state(
                &mut rng,
                block,
                0,
                BLOCK_MEETINGS,
                (2, 2),
                claim,
                format!("I focus on Concept {concept_index}."),
                p,
            );
        }
    }
    for j in 0..projects {
        let block = j / BLOCK.2;
        let changes = 1 + rng.below(3);
        let start = rng.below(STATUSES.len());
        for step in 0..changes {
            let status = STATUSES[(start + step) % STATUSES.len()];
            let (from, to) = (
                BLOCK_MEETINGS * step / changes,
                BLOCK_MEETINGS * (step + 1) / changes,
            );
            let claim = json!({"subject": project(j), "predicate": "has_status", "value": status, "authority": "first_party"});
            let lead = block * BLOCK.0 + rng.below(BLOCK.0);
            state(
                &mut rng,
                block,
                from,
                to,
                (2, 3),
                claim,
                format!("Project {j} is {status}."),
                lead,
            );
        }
        let lead = in_block(&mut rng, block, BLOCK.0);
        let claim = json!({"subject": project(j), "predicate": "led_by_person", "object": person(lead), "authority": "first_party"});
        state(
            &mut rng,
            block,
            0,
            BLOCK_MEETINGS,
            (2, 2),
            claim,
            format!("Person {lead} leads Project {j}."),
            lead,
        );
        let concept_index = in_block(&mut rng, block, BLOCK.3);
        let claim = json!({"subject": project(j), "predicate": "relates_to_concept", "object": concept(concept_index), "authority": "document"});
        state(
            &mut rng,
            block,
            0,
            BLOCK_MEETINGS,
            (2, 2),
            claim,
            format!("Project {j} is about Concept {concept_index}."),
            lead,
        );
        let url = format!("https://github.com/corp/project-{j}");
        let claim = json!({"subject": project(j), "predicate": "has_link", "value": url, "authority": "document"});
        state(
            &mut rng,
            block,
            0,
            BLOCK_MEETINGS,
            (2, 2),
            claim,
            format!("The repo for Project {j} is {url} ."),
            lead,
        );
    }

    // Stable: a meeting's statements keep the order they were drawn in.
    mentions.sort_by_key(|&(meeting, _)| meeting);
    Dataset {
        facts,
        mentions,
        filler: rng,
        scale,
        meetings,
        people,
        companies,
        projects,
        concepts,
        segments: meetings * 100,
    }
}

impl Dataset {
    /// The meetings' bundles as JSON text, in meeting order, made one at a time.
    pub fn bundles(&self) -> impl Iterator<Item = String> + Send + '_ {
        let mut rng = self.filler.clone();
        let mut cursor = 0;
        (0..self.meetings).map(move |meeting| {
            let start = cursor;
            while self
                .mentions
                .get(cursor)
                .is_some_and(|&(at, _)| at as usize == meeting)
            {
                cursor += 1;
            }
            self.bundle(meeting, &self.mentions[start..cursor], &mut rng)
        })
    }

    /// One meeting's bundle: its statements first, then filler segments up to 100.
    fn bundle(&self, meeting: usize, mentions: &[(u32, u32)], rng: &mut Rng) -> String {
        let statements: Vec<&Fact> = mentions
            .iter()
            .map(|&(_, fact)| &self.facts[fact as usize])
            .collect();
        let mut speakers: Vec<usize> = statements.iter().map(|m| m.speaker).collect();
        speakers.sort_unstable();
        speakers.dedup();
        let participants: Vec<Value> = speakers
            .iter()
            .map(|&p| {
                let mut reference = person(p);
                reference.as_object_mut().map(|o| o.remove("kind"));
                json!({"display_name": reference["name"], "email": reference["email"], "speaker_label": format!("P{p}")})
            })
            .collect();
        let mut segments = Vec::with_capacity(100);
        let mut claims = Vec::new();
        for index in 0..100 {
            let (text, speaker) = match statements.get(index) {
                Some(mention) => (mention.text.to_string(), mention.speaker),
                None => {
                    let words: Vec<&str> = (0..12).map(|_| WORDS[rng.below(WORDS.len())]).collect();
                    (words.join(" "), speakers.first().copied().unwrap_or(0))
                }
            };
            segments.push(json!({"id": format!("s{index}"), "start_ms": index * 20_000, "end_ms": index * 20_000 + 15_000,
                                 "speaker": format!("P{speaker}"), "text": text}));
        }
        for (index, mention) in statements.iter().enumerate().take(100) {
            let mut claim: Value =
                serde_json::from_str(&mention.claim).expect("a generated claim is JSON");
            claim["evidence"] = json!({"segment_ids": [format!("s{index}")]});
            claims.push(claim);
        }
        let links: Vec<Value> = (0..3)
            .map(|k| json!({"url": format!("https://docs.example/meeting-{meeting}/doc-{k}"), "provenance": "meeting_chat"}))
            .collect();
        let started_at = FIRST_MEETING_MS + meeting as i64 * meeting_spacing_ms(self.scale);
        json!({
            "meeting": {"external_id": format!("bench-{meeting:06}"), "title": format!("Meeting {meeting}"),
                        "started_at": lore_core::Ts(started_at).to_rfc3339()},
            "participants": participants, "segments": segments, "claims": claims, "links": links,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Per company, the distinct people working there and the distinct meetings naming it as an
    /// employer, each list largest first.
    fn employer_degrees(dataset: &Dataset) -> (Vec<usize>, Vec<usize>) {
        let mut staff: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut meetings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for bundle in dataset.bundles() {
            let bundle: Value = serde_json::from_str(&bundle).unwrap();
            for claim in bundle["claims"].as_array().unwrap() {
                if claim["predicate"] == "works_at" {
                    let company = claim["object"]["name"].to_string();
                    staff
                        .entry(company.clone())
                        .or_default()
                        .insert(claim["subject"]["name"].to_string());
                    meetings
                        .entry(company)
                        .or_default()
                        .insert(bundle["meeting"]["external_id"].to_string());
                }
            }
        }
        let sorted = |map: BTreeMap<String, BTreeSet<String>>| {
            let mut sizes: Vec<usize> = map.values().map(BTreeSet::len).collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            sizes
        };
        (sorted(staff), sorted(meetings))
    }

    #[test]
    fn a_larger_scale_keeps_the_hubs_size() {
        let ((one, one_meetings), (two, two_meetings)) = (
            employer_degrees(&generate(1)),
            employer_degrees(&generate(2)),
        );
        // A hub of about a sixth of the block's people at every scale; a skew over the whole
        // population would make the largest hub at scale 2 about 1.6 times the one at scale 1.
        let ratio = two[0] as f64 / one[0] as f64;
        assert!((0.7..1.25).contains(&ratio), "hub {} vs {}", two[0], one[0]);
        assert!(one[0] > 100, "scale 1 has a hub of hundreds: {}", one[0]);
        // Two blocks: two hubs of about the same size.
        assert!(two[1] as f64 > 0.7 * one[0] as f64, "{:?}", &two[..3]);
        // The hub is named in as many meetings at both scales: its statements are made in its own
        // block's meetings, not spread thinner over all of them.
        let ratio = two_meetings[0] as f64 / one_meetings[0] as f64;
        assert!(
            (0.7..1.25).contains(&ratio),
            "meetings {} vs {}",
            two_meetings[0],
            one_meetings[0]
        );
    }

    #[test]
    fn the_same_scale_gives_the_same_dataset() {
        let dataset = generate(1);
        assert!(dataset.bundles().eq(generate(1).bundles()));
        assert!(dataset.bundles().eq(dataset.bundles()));
    }

    /// The bundles are byte for byte those every round since the first measured (an FNV-1a digest of
    /// their text): a change to the generator would make earlier figures incomparable.
    #[test]
    fn the_dataset_is_the_one_earlier_rounds_measured() {
        for (scale, meetings, digest) in [
            (1, 1000, 0x4a03_87fb_afe7_afd8_u64),
            (2, 2000, 0x3ce7_c280_a3c8_e44c),
        ] {
            let dataset = generate(scale);
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            let mut count = 0;
            for bundle in dataset.bundles() {
                count += 1;
                for byte in bundle.bytes().chain([0]) {
                    hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
                }
            }
            assert_eq!((count, hash), (meetings, digest), "scale {scale}");
        }
    }

    /// Every name the generator gives at scale 2 falls in block 0 or 1, each block holding one scale-1
    /// population; other names are in no block.
    #[test]
    fn every_generated_name_has_its_block() {
        use lore_core::EntityKind::*;
        let dataset = generate(2);
        let mut per_block: BTreeMap<(usize, lore_core::EntityKind), BTreeSet<String>> =
            BTreeMap::new();
        for bundle in dataset.bundles() {
            let bundle: Value = serde_json::from_str(&bundle).unwrap();
            for claim in bundle["claims"].as_array().unwrap() {
                for side in ["subject", "object"] {
                    let Some(name) = claim[side]["name"].as_str() else {
                        continue;
                    };
                    let kind = lore_core::EntityKind::parse(claim[side]["kind"].as_str().unwrap())
                        .unwrap();
                    let block = block_of(kind, name).expect(name);
                    assert!(block < 2, "{name} in block {block}");
                    per_block
                        .entry((block, kind))
                        .or_default()
                        .insert(name.to_string());
                }
            }
        }
        for kind in [Person, Company, Project, Concept] {
            let count = |block: usize| per_block[&(block, kind)].len();
            let (zero, one) = (count(0), count(1));
            assert!(
                zero * 10 > one * 9 && one * 10 > zero * 9,
                "{kind:?}: {zero} vs {one}"
            );
        }
        assert_eq!(block_of(Person, "Person 1999"), Some(1));
        assert_eq!(block_of(Company, "Company 200"), Some(1));
        assert_eq!(block_of(Person, "Alice"), None);
        assert_eq!(block_of(Company, "Person 3"), None);
    }
}
