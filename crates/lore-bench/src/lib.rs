//! `lore bench`: generates the seed-shaped dataset through Lore's own ingest path and measures the
//! living-knowledge reads and writes (p50/p95/p99 over varied targets after a warm-up).

pub mod dataset;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use lore_engine::{Engine, EngineError, SourceRef};
use serde::Serialize;

pub use dataset::{generate, Dataset, Rng};

pub const OWNER: &str = "bench";

#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub scale: usize,
    /// Targets measured per operation (after a warm-up of a tenth as many).
    pub samples: usize,
    /// Ingest only this many of the dataset's meetings (a smoke run); `None` ingests them all.
    pub meetings: Option<usize>,
    /// Meetings applied per write transaction (`Engine::ingest_bundles`); 1 = one durable commit per
    /// meeting.
    pub batch: usize,
    /// Draw the read targets from the whole dataset rather than from its first block.
    pub all_targets: bool,
    /// Measure only the reads, on a database an earlier run left (`lore bench --keep`): no ingest,
    /// no edits, no deletions, no graph index rebuild; nothing is written.
    pub reads_only: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct OpStats {
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub n: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct IngestStats {
    pub claims_per_s: f64,
    pub meetings_per_s: f64,
    pub seconds: f64,
    /// Meetings per durable transaction.
    pub batch: usize,
    /// Statements the ingest's write transactions ran per meeting (`Store::write_statements`; absent
    /// where the backend does not count them): the ingest's work, whatever the machine's speed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statements_per_meeting: Option<f64>,
    /// Knowledge rows the ingest wrote or removed per meeting (`Store::write_operations`: the log
    /// store's log operations; absent where the backend does not count them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knowledge_ops_per_meeting: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub scale: usize,
    pub backend: String,
    pub dataset: BTreeMap<String, u64>,
    pub ops: BTreeMap<String, OpStats>,
    /// Absent for a reads-only run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingest: Option<IngestStats>,
    pub db_bytes_per_1000_claims: Option<u64>,
    /// Statements a committed cascade delete ran, on average over the measured ones
    /// (`Store::write_statements`; absent for a reads-only run and where the backend does not count
    /// them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statements_per_delete: Option<f64>,
    /// Knowledge rows a committed cascade delete wrote or removed, on average
    /// (`Store::write_operations`; absent where the backend does not count them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knowledge_ops_per_delete: Option<f64>,
    /// Per graph operation, the answers' sizes over the same targets (nodes and edges at p50, p95
    /// and the largest), so that graph timings can be read against the neighborhoods they return.
    pub graph_sizes: BTreeMap<String, BTreeMap<String, usize>>,
    /// Milliseconds `Store::prewarm` took before the reads were measured (what `lore serve` does at
    /// start); `projection_cold` was measured before it.
    pub prewarm_ms: f64,
    /// Milliseconds from the prewarm's start until the entity pages and the graph index it asked for
    /// were built on the store's threads (the prewarm does not wait for them); the reads were measured
    /// after it.
    pub indexes_ready_ms: f64,
    /// Milliseconds from the prewarm's start until the full-text index's background merge had
    /// caught up with the ingest (`Store::wait_search_merged`; it starts once writes pause); the
    /// reads were measured after it.
    pub search_merged_ms: f64,
    /// Entities whose pages the prewarm left in memory (`Store::cached_pages`; `None`: the store
    /// keeps none, as PostgreSQL), and the memory they take in MB (estimated from the rows).
    pub page_index_entities: Option<usize>,
    pub page_index_mb: Option<f64>,
    /// Where the read targets were drawn from: "first block" (the default) or "all blocks".
    pub targets: String,
    /// Full runs this report combines (`median_of_runs`); 1 for a single run.
    pub runs: usize,
    /// With more than one run, each run's figures, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_run: Vec<RunFigures>,
    /// The targets for SQLite at scale 1 (`check_targets`), against this report's
    /// figures; empty for other backends, scales and smoke runs, which have none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub target_checks: Vec<TargetCheck>,
}

/// One run's timings, as a report of several runs lists them.
#[derive(Clone, Debug, Serialize)]
pub struct RunFigures {
    pub ops: BTreeMap<String, OpStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingest_claims_per_s: Option<f64>,
}

/// A target the benchmark is held to, and whether the report meets it.
#[derive(Clone, Debug, Serialize)]
pub struct TargetCheck {
    /// The operation (a key of `ops`, or `ingest`).
    pub op: String,
    /// What is held to it: `p95_us` (at most `target`) or `claims_per_s` (at least `target`).
    pub measure: String,
    pub target: f64,
    pub measured: f64,
    pub met: bool,
}

/// The p95 targets on SQLite at scale 1, in µs, and its ingest target in claims/s.
const P95_TARGETS_US: [(&str, f64); 6] = [
    ("projection", 25.0),
    ("hop1", 15.0),
    ("hop2_bounded", 300.0),
    ("hop2", 500.0),
    ("fts_word", 2_000.0),
    ("cascade_delete", 3_000.0),
];
const INGEST_TARGET_CLAIMS_PER_S: f64 = 10_000.0;

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
/// A run's figures are positive and finite; `total_cmp` orders any others without a panic.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Several full runs of the same configuration as one report: every operation's p50, p95 and p99
/// are the medians of the runs' (each percentile on its own), and so are the ingest rates, the
/// prewarm's times and the size per 1,000 claims. The dataset, the statement counts and the
/// answers' sizes do not depend on the machine and are the first run's. `None` for no runs.
pub fn median_of_runs(runs: Vec<BenchReport>) -> Option<BenchReport> {
    if runs.len() < 2 {
        return runs.into_iter().next();
    }
    let of =
        |pick: &dyn Fn(&BenchReport) -> Option<f64>| median(runs.iter().filter_map(pick).collect());
    let mut combined = runs[0].clone();
    for (name, first) in combined.ops.iter_mut() {
        let op = |pick: fn(&OpStats) -> f64| {
            of(&|run: &BenchReport| run.ops.get(name).map(pick)).unwrap_or(0.0)
        };
        *first = OpStats {
            p50_us: op(|s| s.p50_us),
            p95_us: op(|s| s.p95_us),
            p99_us: op(|s| s.p99_us),
            n: first.n,
        };
    }
    if let Some(ingest) = combined.ingest.as_mut() {
        let rate = |pick: fn(&IngestStats) -> f64| {
            of(&|run: &BenchReport| run.ingest.as_ref().map(pick)).unwrap_or(0.0)
        };
        ingest.claims_per_s = rate(|i| i.claims_per_s);
        ingest.meetings_per_s = rate(|i| i.meetings_per_s);
        ingest.seconds = rate(|i| i.seconds);
    }
    combined.prewarm_ms = of(&|run| Some(run.prewarm_ms)).unwrap_or(0.0);
    combined.indexes_ready_ms = of(&|run| Some(run.indexes_ready_ms)).unwrap_or(0.0);
    combined.search_merged_ms = of(&|run| Some(run.search_merged_ms)).unwrap_or(0.0);
    combined.db_bytes_per_1000_claims =
        of(&|run| run.db_bytes_per_1000_claims.map(|b| b as f64)).map(|b| b.round() as u64);
    combined.runs = runs.len();
    combined.per_run = runs
        .iter()
        .map(|run| RunFigures {
            ops: run.ops.clone(),
            ingest_claims_per_s: run.ingest.as_ref().map(|i| i.claims_per_s),
        })
        .collect();
    Some(combined)
}

/// Fills `target_checks` for a full SQLite run at scale 1, the whole dataset ingested and every
/// operation measured (the targets are set for it); leaves it empty for other backends and
/// scales, smoke runs and reads-only runs. Called on the report a run, or `median_of_runs`, gives.
pub fn check_targets(report: &mut BenchReport, config: &BenchConfig) {
    report.target_checks.clear();
    let full_run = config.meetings.is_none() && !config.reads_only;
    if !report.backend.starts_with("sqlite") || report.scale != 1 || !full_run {
        return;
    }
    for (op, target) in P95_TARGETS_US {
        if let Some(stats) = report.ops.get(op) {
            report.target_checks.push(TargetCheck {
                op: op.to_string(),
                measure: "p95_us".into(),
                target,
                measured: stats.p95_us,
                met: stats.p95_us <= target,
            });
        }
    }
    if let Some(ingest) = &report.ingest {
        report.target_checks.push(TargetCheck {
            op: "ingest".into(),
            measure: "claims_per_s".into(),
            target: INGEST_TARGET_CLAIMS_PER_S,
            measured: ingest.claims_per_s,
            met: ingest.claims_per_s >= INGEST_TARGET_CLAIMS_PER_S,
        });
    }
}

/// The `count` entities among `among` that are subject or object of the most claims, most first
/// (ties by id).
fn hubs(
    claims: &[lore_core::model::Claim],
    among: &std::collections::HashSet<&str>,
    count: usize,
) -> Vec<String> {
    let mut degree: BTreeMap<&str, usize> = BTreeMap::new();
    for claim in claims {
        for entity in std::iter::once(&claim.subject).chain(claim.object_entity.iter()) {
            if among.contains(entity.as_str()) {
                *degree.entry(entity.as_str()).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(&str, usize)> = degree.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(count)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// `samples` read targets: every fifth one of `hubs` (while there are hubs), the others uniform over
/// `population`; a draw from an empty list is skipped.
fn draw_targets(
    rng: &mut Rng,
    samples: usize,
    hubs: &[String],
    population: &[&str],
) -> Vec<String> {
    (0..samples)
        .filter_map(|i| {
            if i % 5 == 0 && !hubs.is_empty() {
                Some(hubs[rng.below(hubs.len())].clone())
            } else if !population.is_empty() {
                Some(population[rng.below(population.len())].to_string())
            } else {
                None
            }
        })
        .collect()
}

/// Percentiles of measured durations, in microseconds.
pub fn stats(mut samples: Vec<Duration>) -> OpStats {
    samples.sort_unstable();
    let n = samples.len();
    let at = |q: f64| {
        if n == 0 {
            return 0.0;
        }
        let index = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        (samples[index].as_nanos() as f64 / 1_000.0 * 10.0).round() / 10.0
    };
    OpStats {
        p50_us: at(0.50),
        p95_us: at(0.95),
        p99_us: at(0.99),
        n,
    }
}

/// Times `op` on each target after warming up on a tenth of them; the first failure stops it.
fn measure<T, E: std::fmt::Display>(
    targets: &[T],
    mut op: impl FnMut(&T) -> Result<(), E>,
) -> Result<OpStats, String> {
    for target in targets.iter().take(targets.len() / 10 + 1) {
        op(target).map_err(|e| e.to_string())?;
    }
    let mut samples = Vec::with_capacity(targets.len());
    for target in targets {
        let started = Instant::now();
        op(target).map_err(|e| e.to_string())?;
        samples.push(started.elapsed());
    }
    Ok(stats(samples))
}

/// What the measurements need of the database they read: its entities and claims (after the users'
/// edits), and the facts the report states about how it was filled.
struct Populated {
    /// The dataset's scale (a reads-only run infers it from the number of meetings).
    scale: usize,
    entities: Vec<lore_engine::EntityRow>,
    claims: Vec<lore_core::model::Claim>,
    meeting_count: usize,
    /// Claims before the users' overrides added theirs (a reads-only run: all of them).
    claim_count: usize,
    /// Set when this run generated the dataset (a reads-only run does not know them).
    segments: Option<usize>,
    candidates: Option<usize>,
    ingest: Option<IngestStats>,
    /// A transaction time halfway through the ingest (`show --known-at`).
    halfway: lore_core::Ts,
    /// The middle of the meetings' valid time (`show --valid-at`).
    middle_of_valid_time: lore_core::Ts,
    rng: Rng,
}

/// Ingests the dataset into `engine`, then measures every operation (with `reads_only`, measures the
/// reads of a database an earlier run filled). `progress` hears what is happening.
pub fn run(
    engine: &Engine,
    config: &BenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<BenchReport, String> {
    let populated = if config.reads_only {
        existing(engine, &mut progress)?
    } else {
        populate(engine, config, &mut progress)?
    };
    measure_all(engine, config, populated, &mut progress)
}

/// The database an earlier `lore bench --keep` run filled, as that run left it.
fn existing(engine: &Engine, progress: &mut impl FnMut(&str)) -> Result<Populated, String> {
    progress("reading the existing database");
    let starts: Vec<lore_core::Ts> = engine
        .read(OWNER, |tx| {
            Ok(tx.list_meetings()?.iter().map(|m| m.started_at).collect())
        })
        .map_err(|e| e.to_string())?;
    let meeting_count = starts.len();
    let (first, last) = (starts.iter().min(), starts.iter().max());
    let middle_of_valid_time = match (first, last) {
        (Some(first), Some(last)) => lore_core::Ts(first.0 + (last.0 - first.0) / 2),
        _ => lore_core::Ts(dataset::FIRST_MEETING_MS),
    };
    if meeting_count == 0 {
        return Err(format!("the database holds no meetings of owner '{OWNER}'"));
    }
    // A scale-N dataset has N blocks of meetings and its run deleted fewer than a block's worth.
    let scale = meeting_count.div_ceil(dataset::BLOCK_MEETINGS);
    let entities = engine.list_entities(OWNER).map_err(|e| e.to_string())?;
    let claims = engine
        .read(OWNER, |tx| Ok(tx.list_claims()?))
        .map_err(|e| e.to_string())?;
    let mut recorded: Vec<lore_core::Ts> = claims.iter().map(|claim| claim.recorded_at).collect();
    recorded.sort_unstable();
    let halfway = recorded
        .get(recorded.len() / 2)
        .copied()
        .ok_or("the database holds no claims")?;
    Ok(Populated {
        scale,
        entities,
        claim_count: claims.len(),
        claims,
        meeting_count,
        segments: None,
        candidates: None,
        ingest: None,
        halfway,
        middle_of_valid_time,
        rng: Rng::new(7),
    })
}

/// Generates the dataset, ingests it, and applies the users' retractions and overrides.
fn populate(
    engine: &Engine,
    config: &BenchConfig,
    progress: &mut impl FnMut(&str),
) -> Result<Populated, String> {
    let dataset = generate(config.scale);
    let meeting_count = config.meetings.map_or(dataset.meetings, |limit| {
        dataset.meetings.min(limit.max(10))
    });
    progress(&format!(
        "generated the facts of {meeting_count} meetings; ingesting"
    ));
    let registry = lore_core::Registry::builtin();
    let started = Instant::now();
    let statements_before = engine.store().write_statements();
    let operations_before = engine.store().write_operations();
    let mut candidates = 0usize;
    let mut halfway = None;
    let batch = config.batch.max(1);
    let half = meeting_count / 2;
    let mut done = 0usize;
    let mut failure = None;
    // Each batch's JSON is parsed on the engine's preparing thread, as `lore ingest` parses files.
    // The bundles are made on that thread too, a batch at a time, just before they are parsed.
    let mut texts = dataset.bundles().take(meeting_count);
    let batches = std::iter::from_fn(move || {
        let batch: Vec<_> = texts
            .by_ref()
            .take(batch)
            .map(
                |text| match lore_ingest::parse_bundle(&text, &registry, None) {
                    Ok(bundle) => (bundle.claims.as_ref().map_or(0, Vec::len), Ok(bundle)),
                    Err(errors) => (0, Err(EngineError::Invalid(errors.to_string()))),
                },
            )
            .collect();
        (!batch.is_empty()).then_some(batch)
    });
    // The time before the batch being applied: the one crossing the half is the `known_at` target.
    let mut before_batch = engine.now();
    engine.ingest_pipelined(OWNER, batches, |results| {
        if halfway.is_none() && done + results.len() > half {
            halfway = Some(before_batch);
        }
        for (claims, result) in &results {
            candidates += claims;
            if let (Err(error), None) = (result, &failure) {
                failure = Some(error.to_string());
            }
        }
        if done / 100 != (done + results.len()) / 100 {
            progress(&format!(
                "ingested {}/{}",
                done + results.len(),
                meeting_count
            ));
        }
        done += results.len();
        before_batch = engine.now();
    });
    if let Some(failure) = failure {
        return Err(failure);
    }
    let seconds = started.elapsed().as_secs_f64();
    let ingest = IngestStats {
        claims_per_s: (candidates as f64 / seconds).round(),
        meetings_per_s: (meeting_count as f64 / seconds * 10.0).round() / 10.0,
        seconds: (seconds * 100.0).round() / 100.0,
        batch,
        statements_per_meeting: per_operation(
            statements_before,
            engine.store().write_statements(),
            meeting_count,
        ),
        knowledge_ops_per_meeting: per_operation(
            operations_before,
            engine.store().write_operations(),
            meeting_count,
        ),
    };
    // What the measurements need of the generated facts is their number of meetings: the facts
    // (a gigabyte at scale 100) would only crowd the database out of memory while the reads are
    // measured.
    let segments = meeting_count * 100;
    drop(dataset);

    let mut rng = Rng::new(7);
    let entities = engine.list_entities(OWNER).map_err(|e| e.to_string())?;
    let claims = engine
        .read(OWNER, |tx| Ok(tx.list_claims()?))
        .map_err(|e| e.to_string())?;
    // Users retract a few claims and correct a few values by hand (2% and ~3% at scale 1).
    progress("applying retractions and manual overrides");
    for _ in 0..(claims.len() / 50) {
        let claim = &claims[rng.below(claims.len())];
        let _ = engine.retract_claim(OWNER, &claim.id);
    }
    let claim_count = claims.len();
    drop(claims);
    let people: Vec<&lore_engine::EntityRow> = entities
        .iter()
        .filter(|e| e.kind == lore_core::EntityKind::Person)
        .collect();
    for index in 0..(300 * config.scale).min(people.len()) {
        let person = &people[rng.below(people.len())];
        let value = format!("Manual City {index}");
        engine
            .apply_override(OWNER, &person.id, "located_in", &value)
            .map_err(|e| e.to_string())?;
    }

    let claims_after_edits = engine
        .read(OWNER, |tx| Ok(tx.list_claims()?))
        .map_err(|e| e.to_string())?;
    Ok(Populated {
        scale: config.scale,
        entities,
        claims: claims_after_edits,
        meeting_count,
        claim_count,
        segments: Some(segments),
        candidates: Some(candidates),
        ingest: Some(ingest),
        halfway: halfway.unwrap_or_else(|| engine.now()),
        middle_of_valid_time: lore_core::Ts(
            dataset::FIRST_MEETING_MS
                + dataset::meeting_spacing_ms(config.scale) * (meeting_count as i64 / 2),
        ),
        rng,
    })
}

/// Measures every operation on a populated database (only the reads when `config.reads_only`).
fn measure_all(
    engine: &Engine,
    config: &BenchConfig,
    populated: Populated,
    progress: &mut impl FnMut(&str),
) -> Result<BenchReport, String> {
    let Populated {
        scale,
        entities,
        claims: claims_after_edits,
        meeting_count,
        claim_count,
        segments,
        candidates,
        ingest,
        halfway,
        middle_of_valid_time,
        mut rng,
    } = populated;
    // Statuses after the users' retractions and overrides, before any deletion.
    let statuses =
        claims_after_edits
            .iter()
            .fold(BTreeMap::<String, u64>::new(), |mut counts, claim| {
                *counts
                    .entry(format!("claims_{}", claim.derived.status))
                    .or_default() += 1;
                counts
            });
    let samples = config.samples.max(10);
    // Targets come from the first block of the dataset at every scale: the same population, read in
    // a database that holds `scale` such blocks. Per-entity costs at two scales then compare reads of
    // like neighborhoods with like chances of meeting a row read before (the read cache keeps the
    // entities a snapshot has read); drawing from the whole population would give the smaller scale
    // more repeated targets. Every fifth target is a hub, one of the block's 20 entities with the
    // most claims.
    // With `all_targets`, the population is every block and the hubs are 20 per block.
    let block: Vec<&lore_engine::EntityRow> = entities
        .iter()
        .filter(|e| config.all_targets || dataset::block_of(e.kind, &e.name) == Some(0))
        .collect();
    if block.is_empty() {
        return Err("no entity of the dataset's first block was found".into());
    }
    let members: std::collections::HashSet<&str> = block.iter().map(|e| e.id.as_str()).collect();
    let hub_count = if config.all_targets { 20 * scale } else { 20 };
    // The hubs measured below, then the next as many for the reads before the prewarm.
    let ranked = hubs(&claims_after_edits, &members, 2 * hub_count);
    drop(claims_after_edits);
    let (hubs, cold_hubs) = ranked.split_at(ranked.len().min(hub_count));
    let population: Vec<&str> = block.iter().map(|e| e.id.as_str()).collect();
    let targets = draw_targets(&mut rng, samples, hubs, &population);
    let mut ops = BTreeMap::new();
    // A process that has not prewarmed (a one-shot `lore show`, a server's first minutes) pays a page
    // fault for each page its reads touch first. Measured on targets of their own, none of which the
    // measured reads below read again (a target read once is warm): the block's next 20 hubs, and
    // other entities of the block. Their generator is their own, so that later draws stay as before.
    progress("measuring the projection before prewarming");
    let taken: std::collections::HashSet<&str> =
        targets.iter().chain(&ranked).map(String::as_str).collect();
    let others: Vec<&str> = population
        .iter()
        .copied()
        .filter(|id| !taken.contains(id))
        .collect();
    let cold_targets = draw_targets(&mut Rng::new(13), samples, cold_hubs, &others);
    ops.insert(
        "projection_cold".to_string(),
        measure(&cold_targets, |id| engine.projection(OWNER, id).map(|_| ()))?,
    );
    progress("prewarming, as lore serve does at start");
    let started = Instant::now();
    engine.store().prewarm().map_err(|e| e.to_string())?;
    let prewarm_ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
    // The prewarm asks for the entity pages and the graph index, which the store's threads build
    // meanwhile; the reads below are measured once they are there, as a server reads a minute after
    // its start.
    engine.store().finish_background_work();
    let indexes_ready_ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
    engine.store().wait_search_merged();
    let search_merged_ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
    let pages = engine.store().cached_pages(OWNER);
    let page_index_entities = pages.map(|p| p.entities);
    let page_index_mb = pages.map(|p| (p.bytes as f64 / 1e5).round() / 10.0);
    progress("measuring the projection");
    ops.insert(
        "projection".to_string(),
        measure(&targets, |id| engine.projection(OWNER, id).map(|_| ()))?,
    );
    progress("measuring the graph neighborhood");
    let unbounded = |hops: u8| lore_engine::GraphOptions {
        hops,
        limit: 500,
        valid_at: None,
    };
    let graph_op = |options: lore_engine::GraphOptions| {
        measure(&targets, |id| engine.graph(OWNER, id, &options).map(|_| ()))
    };
    let mut graph_sizes = BTreeMap::new();
    let mut sizes_of = |name: &str, options: &lore_engine::GraphOptions| -> Result<(), String> {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for id in &targets {
            let view = engine
                .graph(OWNER, id, options)
                .map_err(|e| e.to_string())?;
            nodes.push(view.node_count());
            edges.push(view.edge_count());
        }
        nodes.sort_unstable();
        edges.sort_unstable();
        let at =
            |sorted: &[usize], q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        let summary: BTreeMap<String, usize> = [
            ("nodes_p50", at(&nodes, 0.5)),
            ("nodes_p95", at(&nodes, 0.95)),
            ("nodes_max", at(&nodes, 1.0)),
            ("edges_p50", at(&edges, 0.5)),
            ("edges_p95", at(&edges, 0.95)),
            ("edges_max", at(&edges, 1.0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        graph_sizes.insert(name.to_string(), summary);
        Ok(())
    };
    sizes_of("hop1", &unbounded(1))?;
    sizes_of("hop2", &unbounded(2))?;
    sizes_of(
        "hop2_bounded",
        &lore_engine::GraphOptions {
            hops: 2,
            ..Default::default()
        },
    )?;
    ops.insert("hop1".to_string(), graph_op(unbounded(1))?);
    ops.insert("hop2".to_string(), graph_op(unbounded(2))?);
    ops.insert(
        "hop2_bounded".to_string(),
        graph_op(lore_engine::GraphOptions {
            hops: 2,
            ..Default::default()
        })?,
    );

    progress("measuring full-text search");
    let words: Vec<String> = (0..samples)
        .map(|i| dataset::WORDS[i % dataset::WORDS.len()].to_string())
        .collect();
    let phrases: Vec<String> = (0..samples)
        .map(|i| {
            format!(
                "\"{} {}\"",
                dataset::WORDS[i % dataset::WORDS.len()],
                dataset::WORDS[(i * 7 + 3) % dataset::WORDS.len()]
            )
        })
        .collect();
    let search_op = |queries: &[String]| {
        measure(queries, |query| {
            let request = lore_engine::SearchRequest {
                query: query.clone(),
                kind: Some("segment".into()),
                limit: 20,
                newest_first: false,
            };
            engine.search(OWNER, &request).map(|_| ())
        })
    };
    ops.insert("fts_word".to_string(), search_op(&words)?);
    ops.insert("fts_phrase".to_string(), search_op(&phrases)?);

    progress("measuring time travel");
    ops.insert(
        "known_at".to_string(),
        measure(&targets, |id| {
            let at = lore_engine::TimeTravel {
                valid_at: None,
                known_at: Some(halfway),
            };
            engine.show_at(OWNER, id, &at).map(|_| ())
        })?,
    );
    ops.insert(
        "valid_at".to_string(),
        measure(&targets, |id| {
            let at = lore_engine::TimeTravel {
                valid_at: Some(middle_of_valid_time),
                known_at: None,
            };
            engine.show_at(OWNER, id, &at).map(|_| ())
        })?,
    );

    let (mut statements_per_delete, mut knowledge_ops_per_delete) = (None, None);
    if !config.reads_only {
        let people: Vec<&lore_engine::EntityRow> = entities
            .iter()
            .filter(|e| e.kind == lore_core::EntityKind::Person)
            .collect();
        (statements_per_delete, knowledge_ops_per_delete) = measure_writes(
            engine,
            config,
            &Writes {
                targets: &targets,
                people: &people,
                samples,
            },
            &mut rng,
            &mut ops,
            progress,
        )?;
    }

    let mut dataset_sizes = BTreeMap::new();
    dataset_sizes.insert("meetings".to_string(), meeting_count as u64);
    if let Some(segments) = segments {
        dataset_sizes.insert("segments".to_string(), segments as u64);
    }
    dataset_sizes.insert("entities".to_string(), entities.len() as u64);
    dataset_sizes.insert("claims".to_string(), claim_count as u64);
    if let Some(candidates) = candidates {
        dataset_sizes.insert("claim_candidates".to_string(), candidates as u64);
    }
    if !config.reads_only {
        let claims_after = engine
            .read(OWNER, |tx| Ok(tx.list_claims()?.len()))
            .map_err(|e| e.to_string())?;
        let evidence_after = engine
            .read(OWNER, |tx| Ok(tx.list_evidence()?.len()))
            .map_err(|e| e.to_string())?;
        dataset_sizes.insert("claims_after_deletes".to_string(), claims_after as u64);
        dataset_sizes.insert("evidence_after_deletes".to_string(), evidence_after as u64);
    }
    dataset_sizes.extend(statuses);
    Ok(BenchReport {
        scale,
        backend: engine.store().backend_name().to_string(),
        dataset: dataset_sizes,
        ops,
        ingest,
        db_bytes_per_1000_claims: None,
        statements_per_delete,
        knowledge_ops_per_delete,
        graph_sizes,
        prewarm_ms,
        indexes_ready_ms,
        search_merged_ms,
        page_index_entities,
        page_index_mb,
        targets: if config.all_targets {
            "all blocks".into()
        } else {
            "first block".into()
        },
        runs: 1,
        per_run: Vec::new(),
        target_checks: Vec::new(),
    })
}

/// `count` distinct meeting ids drawn at random (a partial Fisher-Yates shuffle).
fn distinct_draws(
    rng: &mut Rng,
    meetings: &[lore_core::model::Meeting],
    count: usize,
) -> Vec<String> {
    let mut ids: Vec<&str> = meetings.iter().map(|meeting| meeting.id.as_str()).collect();
    let count = count.min(ids.len());
    for index in 0..count {
        let other = index + rng.below(ids.len() - index);
        ids.swap(index, other);
    }
    ids.into_iter().take(count).map(str::to_string).collect()
}

/// What the write measurements read of the read phase.
struct Writes<'a> {
    targets: &'a [String],
    people: &'a [&'a lore_engine::EntityRow],
    samples: usize,
}

/// The statements write transactions ran from `before` to `after`, per operation, to one decimal.
fn per_operation(before: Option<u64>, after: Option<u64>, operations: usize) -> Option<f64> {
    let ran = after?.checked_sub(before?)?;
    (operations > 0).then(|| (ran as f64 / operations as f64 * 10.0).round() / 10.0)
}

/// The cascade delete (rolled back, then committed) and the graph index rebuild after a write;
/// returns the statements and the knowledge operations per committed delete.
fn measure_writes(
    engine: &Engine,
    config: &BenchConfig,
    inputs: &Writes,
    rng: &mut Rng,
    ops: &mut BTreeMap<String, OpStats>,
    progress: &mut impl FnMut(&str),
) -> Result<(Option<f64>, Option<f64>), String> {
    progress("measuring deletions");
    // Meeting rows only (`Engine::list_meetings` also counts every meeting's segments).
    let meetings = engine
        .read(OWNER, |tx| Ok(tx.list_meetings()?))
        .map_err(|e| e.to_string())?;
    // As many distinct meetings as there are read targets, plus a tenth for the warm-up, and at
    // most half the meetings: each is deleted once (committed) after the rolled-back pass over
    // the same ones.
    let unique = distinct_draws(
        rng,
        &meetings,
        (inputs.samples + inputs.samples / 10 + 1).min(meetings.len() / 2),
    );
    ops.insert(
        "cascade_delete_rollback".to_string(),
        measure(&unique, |id| {
            engine
                .preview_delete(OWNER, SourceRef::Meeting(id))
                .map(|_| ())
        })?,
    );
    // Deleting is destructive: warm up and measure on different meetings, each deleted once (a
    // tenth as many as are measured warm up: 31 and 300).
    let warmup = unique.len() / 11 + 1;
    for id in unique.iter().take(warmup) {
        engine
            .delete_source(OWNER, SourceRef::Meeting(id))
            .map_err(|e| e.to_string())?;
    }
    let mut samples = Vec::with_capacity(unique.len());
    let statements_before = engine.store().write_statements();
    let operations_before = engine.store().write_operations();
    for id in unique.iter().skip(warmup) {
        let started = Instant::now();
        engine
            .delete_source(OWNER, SourceRef::Meeting(id))
            .map_err(|e| e.to_string())?;
        samples.push(started.elapsed());
    }
    let statements = per_operation(
        statements_before,
        engine.store().write_statements(),
        samples.len(),
    );
    let operations = per_operation(
        operations_before,
        engine.store().write_operations(),
        samples.len(),
    );
    ops.insert("cascade_delete".to_string(), stats(samples));

    // What a long-lived process pays after each write: the first graph read answers from queries,
    // the second builds the in-memory adjacency from one scan and answers from it (measured here).
    progress("measuring the graph index rebuild after a write");
    let bounded = lore_engine::GraphOptions {
        hops: 2,
        ..Default::default()
    };
    let mut rebuilds = Vec::new();
    let mut after_write = Vec::new();
    // Each sample rescans the whole graph: 30 at scale 1, fewer (at least 3) at larger scales.
    let rebuild_samples = (30 / config.scale.max(1)).max(3);
    for (index, id) in inputs.targets.iter().take(rebuild_samples).enumerate() {
        let person = &inputs.people[index % inputs.people.len().max(1)];
        // The deletions above may have removed this person or this target: then try the next.
        let moved =
            engine.apply_override(OWNER, &person.id, "located_in", &format!("Moved {index}"));
        let started = Instant::now();
        if moved.is_err() || engine.graph(OWNER, id, &bounded).is_err() {
            continue;
        }
        after_write.push(started.elapsed());
        // The second read of the version answers from queries too and asks for the index, which
        // the store's thread builds while reads go on; measured until it is there.
        let started = Instant::now();
        engine
            .graph(OWNER, id, &bounded)
            .map_err(|e| e.to_string())?;
        after_write.push(started.elapsed());
        engine.store().finish_background_work();
        rebuilds.push(started.elapsed());
    }
    ops.insert("graph_after_write".to_string(), stats(after_write));
    ops.insert("graph_index_rebuild".to_string(), stats(rebuilds));

    Ok((statements, operations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(backend: &str, p95_us: &[(&str, f64)], claims_per_s: f64) -> BenchReport {
        BenchReport {
            scale: 1,
            backend: backend.into(),
            dataset: BTreeMap::from([("claims".to_string(), 10_772)]),
            ops: p95_us
                .iter()
                .map(|(op, p95)| {
                    let stats = OpStats {
                        p50_us: p95 / 2.0,
                        p95_us: *p95,
                        p99_us: p95 * 2.0,
                        n: 300,
                    };
                    (op.to_string(), stats)
                })
                .collect(),
            ingest: Some(IngestStats {
                claims_per_s,
                meetings_per_s: claims_per_s / 30.0,
                seconds: 300_000.0 / claims_per_s,
                batch: 32,
                statements_per_meeting: Some(680.2),
                knowledge_ops_per_meeting: None,
            }),
            db_bytes_per_1000_claims: Some(claims_per_s as u64),
            statements_per_delete: Some(443.2),
            knowledge_ops_per_delete: None,
            graph_sizes: BTreeMap::new(),
            prewarm_ms: claims_per_s / 1_000.0,
            indexes_ready_ms: 150.0,
            search_merged_ms: 400.0,
            page_index_entities: Some(1_922),
            page_index_mb: Some(2.4),
            targets: "first block".into(),
            runs: 1,
            per_run: Vec::new(),
            target_checks: Vec::new(),
        }
    }

    fn config(meetings: Option<usize>, reads_only: bool) -> BenchConfig {
        BenchConfig {
            scale: 1,
            samples: 300,
            meetings,
            batch: 32,
            all_targets: false,
            reads_only,
        }
    }

    #[test]
    fn several_runs_report_the_median_of_each_figure() {
        let runs = vec![
            report("sqlite", &[("projection", 9.0), ("hop1", 30.0)], 3_000.0),
            report("sqlite", &[("projection", 5.0), ("hop1", 10.0)], 4_000.0),
            report("sqlite", &[("projection", 7.0), ("hop1", 20.0)], 2_000.0),
        ];
        let combined = median_of_runs(runs).unwrap();
        assert_eq!(combined.runs, 3);
        assert_eq!(combined.per_run.len(), 3);
        assert_eq!(combined.per_run[1].ingest_claims_per_s, Some(4_000.0));
        let projection = &combined.ops["projection"];
        assert_eq!(
            (projection.p50_us, projection.p95_us, projection.p99_us),
            (3.5, 7.0, 14.0)
        );
        assert_eq!(combined.ops["hop1"].p95_us, 20.0);
        assert_eq!(combined.ops["hop1"].n, 300);
        let ingest = combined.ingest.as_ref().unwrap();
        assert_eq!(ingest.claims_per_s, 3_000.0);
        assert_eq!(ingest.meetings_per_s, 100.0);
        assert_eq!(ingest.seconds, 100.0);
        assert_eq!(combined.prewarm_ms, 3.0);
        assert_eq!(combined.db_bytes_per_1000_claims, Some(3_000));
        // An even count takes the mean of the middle two; one run is itself.
        let two = median_of_runs(vec![
            report("sqlite", &[("hop1", 10.0)], 1_000.0),
            report("sqlite", &[("hop1", 20.0)], 2_000.0),
        ])
        .unwrap();
        assert_eq!(two.ops["hop1"].p95_us, 15.0);
        assert_eq!(two.ingest.unwrap().claims_per_s, 1_500.0);
        let one = median_of_runs(vec![report("sqlite", &[("hop1", 10.0)], 1_000.0)]).unwrap();
        assert_eq!((one.runs, one.per_run.len()), (1, 0));
        assert!(median_of_runs(Vec::new()).is_none());
    }

    #[test]
    fn targets_are_checked_for_a_full_sqlite_run_at_scale_1_only() {
        let figures = [
            ("projection", 25.0),
            ("hop1", 15.1),
            ("hop2_bounded", 12.0),
            ("hop2", 140.0),
            ("fts_word", 1_500.0),
            ("cascade_delete", 20_000.0),
        ];
        let mut full = report("sqlite", &figures, 10_000.0);
        check_targets(&mut full, &config(None, false));
        let met: Vec<(&str, bool)> = full
            .target_checks
            .iter()
            .map(|check| (check.op.as_str(), check.met))
            .collect();
        assert_eq!(
            met,
            [
                ("projection", true),
                ("hop1", false),
                ("hop2_bounded", true),
                ("hop2", true),
                ("fts_word", true),
                ("cascade_delete", false),
                ("ingest", true),
            ]
        );
        let ingest = full.target_checks.last().unwrap();
        assert_eq!((ingest.target, ingest.measured), (10_000.0, 10_000.0));
        for (backend, scale, config) in [
            ("sqlite", 1, config(Some(150), false)),
            ("sqlite", 1, config(None, true)),
            ("sqlite", 10, config(None, false)),
            ("postgres", 1, config(None, false)),
        ] {
            let mut other = report(backend, &figures, 10_000.0);
            other.scale = scale;
            check_targets(&mut other, &config);
            assert!(
                other.target_checks.is_empty(),
                "{backend} {scale} {config:?}"
            );
        }
    }
}
