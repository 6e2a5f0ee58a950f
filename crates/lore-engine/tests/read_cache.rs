//! The SQLite reader's memo of graph reads (issue 8) must never change an answer: graphs read through
//! a warm memo equal graphs read by a fresh store (empty memo) on the same file, before and after
//! writes from this engine and from another connection, and nothing crosses owners (L20).

mod common;

use std::sync::Arc;

use common::{example_files, TestClock};
use lore_core::{EntityKind, Ts};
use lore_engine::{Engine, GraphOptions, GraphView, SourceRef};
use lore_store::SqliteStore;

const OWNER: &str = "alice";
const OTHER: &str = "bob";

fn open(path: &std::path::Path, clock: &TestClock) -> Engine {
    let store = SqliteStore::open(path).expect("open sqlite");
    let shared = clock.0.clone();
    Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()))
}

/// A clock, a temporary folder (kept while the test runs), a database file in it and an engine on it.
fn fresh() -> (TestClock, tempfile::TempDir, std::path::PathBuf, Engine) {
    let clock = TestClock::new("2026-11-20T12:00:00Z");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let engine = open(&path, &clock);
    (clock, dir, path, engine)
}

/// Every entity's 1-hop and 2-hop graph (bounded and unbounded), in a stable order.
fn all_graphs(engine: &Engine, owner: &str) -> Vec<(String, u8, usize, Option<GraphView>)> {
    let mut graphs = Vec::new();
    for entity in engine.list_entities(owner).unwrap() {
        for (hops, limit, valid_at) in [
            (1, 50, None),
            (2, 50, None),
            (2, 500, None),
            (1, 3, None),
            (2, 50, Ts::parse("2026-06-01T00:00:00Z").ok()),
            (2, 4, None),
        ] {
            let options = GraphOptions {
                hops,
                limit,
                valid_at,
            };
            graphs.push((
                entity.id.clone(),
                hops,
                limit,
                engine.graph(owner, &entity.id, &options).ok(),
            ));
        }
    }
    graphs
}

/// The same graphs, each read by a store opened for it alone: the first graph read of a store answers
/// from queries (the reader builds its in-memory index only on the second), so this is the reference.
fn uncached_graphs(
    path: &std::path::Path,
    clock: &TestClock,
    owner: &str,
) -> Vec<(String, u8, usize, Option<GraphView>)> {
    let listing = all_graphs(&open(path, clock), owner);
    fresh_graphs(|| open(path, clock), owner, &listing)
}

/// Each graph of `listing` read again by a store that `open` gives for it alone.
fn fresh_graphs(
    open: impl Fn() -> Engine,
    owner: &str,
    listing: &[(String, u8, usize, Option<GraphView>)],
) -> Vec<(String, u8, usize, Option<GraphView>)> {
    listing
        .iter()
        .enumerate()
        .map(|(at, (id, hops, limit, _))| {
            let valid_at = (at % 6 == 4).then(|| Ts::parse("2026-06-01T00:00:00Z").unwrap());
            let options = GraphOptions {
                hops: *hops,
                limit: *limit,
                valid_at,
            };
            let graph = open().graph(owner, id, &options).ok();
            (id.clone(), *hops, *limit, graph)
        })
        .collect()
}

fn ingest_examples(engine: &Engine, owner: &str, range: std::ops::Range<usize>) {
    let files = example_files();
    for file in &files[range] {
        engine.ingest_bundle_file(owner, file).unwrap();
    }
}

/// A generator of numbers below `n` (xorshift), so the random writes repeat exactly.
fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    }
}

/// One write of a random kind by `step`: a retraction of a claim linking two entities, a manual
/// value, a merge of two entities of one kind, a meeting's deletion by another connection (as another
/// process would), or a re-ingest with the clock moved on. Returns whether it wrote (a retraction of
/// a claim retracted before, or a refused merge, writes nothing).
fn random_write(
    engine: &Engine,
    path: &std::path::Path,
    clock: &TestClock,
    step: usize,
    below: &mut impl FnMut(usize) -> usize,
) -> bool {
    random_write_with(engine, path, clock, step, below, open)
}

/// `random_write`, the other connection opened by `reopen`.
fn random_write_with(
    engine: &Engine,
    path: &std::path::Path,
    clock: &TestClock,
    step: usize,
    below: &mut impl FnMut(usize) -> usize,
    reopen: fn(&std::path::Path, &TestClock) -> Engine,
) -> bool {
    let entities = engine.list_entities(OWNER).unwrap();
    match step % 6 {
        0 | 3 => {
            let claims = engine.read(OWNER, |tx| Ok(tx.list_claims()?)).unwrap();
            let linking: Vec<_> = claims
                .iter()
                .filter(|c| c.object_entity.is_some())
                .collect();
            let claim = &linking[below(linking.len())];
            engine.retract_claim(OWNER, &claim.id).is_ok()
        }
        1 => {
            let people: Vec<_> = entities
                .iter()
                .filter(|e| e.kind == EntityKind::Person)
                .collect();
            let person = &people[below(people.len())];
            engine
                .apply_override(OWNER, &person.id, "located_in", &format!("City {step}"))
                .unwrap();
            true
        }
        2 => {
            let kind = entities[below(entities.len())].kind;
            let same: Vec<_> = entities.iter().filter(|e| e.kind == kind).collect();
            if same.len() < 2 {
                return false;
            }
            let a = below(same.len());
            let b = (a + 1 + below(same.len() - 1)) % same.len();
            engine
                .merge_entities(OWNER, &same[a].id, &same[b].id)
                .is_ok()
        }
        4 => {
            let meetings = engine.list_meetings(OWNER).unwrap();
            let meeting = meetings[below(meetings.len())].id.clone();
            reopen(path, clock)
                .delete_source(OWNER, SourceRef::Meeting(&meeting))
                .unwrap();
            true
        }
        _ => {
            ingest_examples(engine, OWNER, 0..10);
            let now = *clock.0.lock().unwrap();
            clock.set(Ts(now.0 + 40 * 86_400_000));
            true
        }
    }
}

#[test]
fn graphs_through_the_memo_equal_graphs_from_a_fresh_store() {
    let (clock, _dir, path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..6);

    // Warm the memo, then read everything again through it.
    let first = all_graphs(&engine, OWNER);
    assert!(first
        .iter()
        .any(|(_, _, _, g)| g.as_ref().is_some_and(|g| g.node_count() > 3)));
    assert_eq!(all_graphs(&engine, OWNER), first);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), first);

    // A write by this engine (new meetings) invalidates the memo.
    ingest_examples(&engine, OWNER, 6..10);
    let after_ingest = all_graphs(&engine, OWNER);
    assert_ne!(after_ingest, first);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), after_ingest);

    // So does a write by another connection to the same file (another process, say).
    let other = open(&path, &clock);
    let meeting = other.list_meetings(OWNER).unwrap()[2].id.clone();
    other
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    let after_delete = all_graphs(&engine, OWNER);
    assert_ne!(after_delete, after_ingest);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), after_delete);
}

/// The graph index and the entity pages are kept per owner and owner version: another owner's write
/// leaves them in place, while the owner's own write (by this engine or another connection) replaces
/// them.
#[test]
fn another_owners_write_keeps_the_index() {
    let (clock, _dir, path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..4);
    assert!(!engine.store().cached_graph(OWNER));
    let graphs = all_graphs(&engine, OWNER);
    engine.store().prewarm().unwrap();
    engine.store().finish_background_work();
    assert!(engine.store().cached_graph(OWNER));
    assert!(engine.store().cached_pages(OWNER).is_some());
    let pages = all_page_reads(&engine, OWNER);

    ingest_examples(&open(&path, &clock), OTHER, 4..6);
    assert!(
        engine.store().cached_graph(OWNER),
        "another owner's write dropped the index"
    );
    assert!(
        engine.store().cached_pages(OWNER).is_some(),
        "another owner's write dropped the pages"
    );
    assert_eq!(all_graphs(&engine, OWNER), graphs);
    assert_eq!(uncached_graphs(&path, &clock, OWNER), graphs);
    assert_eq!(all_page_reads(&engine, OWNER), pages);
    assert_eq!(all_page_reads(&open(&path, &clock), OWNER), pages);

    let meeting = engine.list_meetings(OWNER).unwrap()[0].id.clone();
    open(&path, &clock)
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    assert!(
        !engine.store().cached_graph(OWNER),
        "the owner's write kept the index"
    );
    assert_eq!(engine.store().cached_pages(OWNER), None);
    let after = all_graphs(&engine, OWNER);
    assert_ne!(after, graphs);
    engine.store().finish_background_work();
    assert!(engine.store().cached_graph(OWNER));
    assert_eq!(all_graphs(&engine, OWNER), after);
    assert_eq!(uncached_graphs(&path, &clock, OWNER), after);
}

#[test]
fn the_memo_keeps_owners_apart() {
    let (_clock, _dir, _path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..4);
    let graphs = all_graphs(&engine, OWNER);
    // The other owner owns nothing: the same ids, read through the warm memo, are not found.
    for (id, hops, limit, _) in &graphs {
        let options = GraphOptions {
            hops: *hops,
            limit: *limit,
            valid_at: None,
        };
        assert!(engine.graph(OTHER, id, &options).is_err(), "{id} leaked");
    }
    assert!(all_graphs(&engine, OTHER).is_empty());
}

/// The in-memory adjacency (and the memo) under random writes: retractions, manual values, merges,
/// meeting deletions and re-ingests, and the clock moving, each followed by every graph read through
/// the warm reader and compared with a fresh store on the same file. A stale index (an invalidation
/// that missed a write) answers with the old adjacency and fails the comparison.
#[test]
fn graphs_through_the_index_follow_random_writes() {
    let (clock, _dir, path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..10);
    let mut below = xorshift(0x9e37_79b9_7f4a_7c15);
    let mut previous = all_graphs(&engine, OWNER);
    let mut changed = 0;
    for step in 0..14 {
        random_write(&engine, &path, &clock, step, &mut below);
        // Right after the write the index is gone: the reads answer from queries and the second
        // asks the build thread for a new one; once it is built they answer from it.
        let before_build = all_graphs(&engine, OWNER);
        engine.store().finish_background_work();
        assert!(engine.store().cached_graph(OWNER), "step {step}: no index");
        let warm = all_graphs(&engine, OWNER);
        assert_eq!(warm, before_build, "step {step}");
        assert_eq!(warm, uncached_graphs(&path, &clock, OWNER), "step {step}");
        if warm != previous {
            changed += 1;
        }
        previous = warm;
    }
    // The writes did change the graphs, so equality above is not vacuous.
    assert!(changed >= 7, "only {changed} steps changed a graph");
}

/// Read before its observations (a clock behind the meetings' dates, or meetings dated ahead): the
/// index ranks by the stored weight basis and shows the L19 weight summed from the observations, as
/// the queries do, so both still agree, with the weights of future observations counted in full.
#[test]
fn graphs_read_before_their_observations_equal_a_fresh_stores() {
    let (clock, _dir, path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..10);
    let starts: Vec<Ts> = engine
        .list_meetings(OWNER)
        .unwrap()
        .iter()
        .map(|m| m.started_at)
        .collect();
    let (first, last) = (*starts.iter().min().unwrap(), *starts.iter().max().unwrap());
    for at in [Ts(first.0 - 86_400_000), Ts((first.0 + last.0) / 2)] {
        clock.set(at);
        let warm = all_graphs(&engine, OWNER);
        let warm_again = all_graphs(&engine, OWNER);
        assert_eq!(warm, warm_again);
        assert_eq!(warm, uncached_graphs(&path, &clock, OWNER), "at {at:?}");
        assert!(warm
            .iter()
            .any(|(_, _, _, g)| g.as_ref().is_some_and(|g| g.node_count() > 3)));
    }
}

/// PostgreSQL keeps the same in-memory adjacency per owner and `owner_versions` row: graphs read
/// through it equal graphs from a fresh store (whose first graph read queries), after writes by the
/// same server and by another one (another process), and the memo keeps owners apart (L20). Without
/// the version bump in every write the index would outlive the other server's deletion and fail.
#[test]
fn postgres_graphs_through_the_index_equal_a_fresh_stores() {
    let Some(base) = lore_store::testing::pg_test_url("postgres_graph_index") else {
        return;
    };
    let url = lore_store::testing::fresh_pg_database(&base);
    let clock = TestClock::new("2026-11-20T12:00:00Z");
    let blobs = tempfile::tempdir().unwrap();
    let open_pg = || {
        let store = lore_store::PostgresStore::open(&url, blobs.path()).expect("open postgres");
        let shared = clock.0.clone();
        Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()))
    };
    let fresh =
        |listing: &[(String, u8, usize, Option<GraphView>)]| fresh_graphs(open_pg, OWNER, listing);
    let engine = open_pg();
    ingest_examples(&engine, OWNER, 0..6);
    let first = all_graphs(&engine, OWNER);
    assert!(first
        .iter()
        .any(|(_, _, _, g)| g.as_ref().is_some_and(|g| g.node_count() > 3)));
    engine.store().finish_background_work();
    assert!(engine.store().cached_graph(OWNER), "no index was built");
    assert_eq!(all_graphs(&engine, OWNER), first);
    assert_eq!(fresh(&first), first);

    // Another server deletes a meeting: this server's index must not answer from before it.
    let meeting = engine.list_meetings(OWNER).unwrap()[1].id.clone();
    open_pg()
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    assert!(
        !engine.store().cached_graph(OWNER),
        "the index outlived the write"
    );
    let after_delete = all_graphs(&engine, OWNER);
    assert_ne!(after_delete, first);
    engine.store().finish_background_work();
    assert!(engine.store().cached_graph(OWNER));
    assert_eq!(all_graphs(&engine, OWNER), after_delete);
    assert_eq!(fresh(&after_delete), after_delete);

    // This server's own writes too.
    ingest_examples(&engine, OWNER, 6..10);
    let after_ingest = all_graphs(&engine, OWNER);
    assert_ne!(after_ingest, after_delete);
    engine.store().finish_background_work();
    assert_eq!(all_graphs(&engine, OWNER), after_ingest);
    assert_eq!(fresh(&after_ingest), after_ingest);

    // The other owner sees none of it through the warm memo.
    for (id, hops, limit, _) in &after_ingest {
        let options = GraphOptions {
            hops: *hops,
            limit: *limit,
            valid_at: None,
        };
        assert!(engine.graph(OTHER, id, &options).is_err(), "{id} leaked");
    }
}

/// What the reader's page index answers for one id: the entity row, its active claims, its resource
/// links, the meeting links attached to it, and the projection (`show`) built from them.
type PageReads = (
    String,
    Option<lore_core::model::Entity>,
    Vec<lore_store::ProjectedClaim>,
    Vec<lore_core::model::ResourceLink>,
    Vec<lore_store::AttachedLink>,
    Option<lore_engine::Projection>,
);

/// The page reads of every entity row of `owner` (merged ones too), every subject of a claim, and
/// an id that names nothing.
fn all_page_reads(engine: &Engine, owner: &str) -> Vec<PageReads> {
    let mut ids: Vec<String> = engine
        .read(OWNER, |tx| {
            let mut ids: Vec<String> = tx.list_entities()?.into_iter().map(|e| e.id).collect();
            ids.extend(tx.list_claims()?.into_iter().map(|c| c.subject));
            Ok(ids)
        })
        .unwrap();
    ids.push("e_nothing_here".to_string());
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let (entity, claims, links, attached) = engine
                .read(owner, |tx| {
                    Ok((
                        tx.find_entity(&id)?,
                        tx.list_projected_claims(&id)?,
                        tx.list_resource_links_by_entity(&id)?,
                        tx.list_attached_links(&id)?,
                    ))
                })
                .unwrap();
            let projection = engine.projection(owner, &id).ok();
            (id, entity, claims, links, attached, projection)
        })
        .collect()
}

/// The page index (issue 8) under random writes: each write drops it; it is built again when the
/// prewarm (even steps) or enough projections read in one version (odd steps) ask, and then every
/// entity's page reads through it equal a fresh store's, which has no index and queries. A stale
/// index (an invalidation that missed a write, here also another connection's) fails the comparison.
#[test]
fn pages_through_the_index_follow_random_writes() {
    let (clock, _dir, path, engine) = fresh();
    ingest_examples(&engine, OWNER, 0..10);
    assert_eq!(engine.store().cached_pages(OWNER), None);
    let mut below = xorshift(0x2545_f491_4f6c_dd1d);
    let mut previous = Vec::new();
    let mut changed = 0;
    for step in 0..12 {
        if step % 2 == 0 {
            engine.store().prewarm().unwrap();
        } else {
            // More projections in one version than the reader answers by queries before it builds.
            let entities = engine.list_entities(OWNER).unwrap();
            for at in 0..1_000 {
                engine
                    .projection(OWNER, &entities[at % entities.len()].id)
                    .unwrap();
            }
        }
        // Either way the store's thread builds them; reads meanwhile answer from queries.
        engine.store().finish_background_work();
        let pages = engine.store().cached_pages(OWNER);
        // Every page is held: none left to queries (which would hide a build that split a page).
        assert!(
            pages.is_some_and(|p| p.entities > 10 && p.left_to_queries == 0),
            "step {step}: {pages:?}"
        );
        let warm = all_page_reads(&engine, OWNER);
        assert!(
            warm.iter().any(|(.., attached, _)| !attached.is_empty()),
            "step {step}: the examples attach no meeting link to any entity"
        );
        let fresh = open(&path, &clock);
        assert_eq!(warm, all_page_reads(&fresh, OWNER), "step {step}");
        assert_eq!(fresh.store().cached_pages(OWNER), None);
        // Nothing of it answers another owner (L20).
        for (id, ..) in &warm {
            let other = engine
                .read(OTHER, |tx| {
                    Ok((
                        tx.find_entity(id)?,
                        tx.list_projected_claims(id)?,
                        tx.list_resource_links_by_entity(id)?,
                        tx.list_attached_links(id)?,
                    ))
                })
                .unwrap();
            assert_eq!(other, (None, vec![], vec![], vec![]), "{id} leaked");
            assert!(engine.projection(OTHER, id).is_err());
        }
        if warm != previous {
            changed += 1;
        }
        previous = warm;

        let wrote = random_write(&engine, &path, &clock, step, &mut below);
        // Every write moves the snapshot version, and the index goes with it.
        if wrote {
            assert_eq!(engine.store().cached_pages(OWNER), None, "step {step}");
        }
    }
    // The writes did change the pages, so the equality above is not vacuous.
    assert!(changed >= 10, "only {changed} steps changed a page");
}

fn open_log(path: &std::path::Path, clock: &TestClock) -> Engine {
    let store = lore_store::LogStore::open(path).expect("open the log store");
    let shared = clock.0.clone();
    Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()))
}

/// The log store's entity pages (built by reads, forgotten by the changes that reach them) under
/// random writes, some by another connection: every entity's page reads, read twice (the second
/// time from the pages the first built), equal those of a store opened afresh on the file, which
/// has read nothing yet, and those of a write transaction, which reads the tables. A page a write
/// failed to forget fails the comparison.
#[test]
fn log_store_pages_follow_random_writes() {
    let clock = TestClock::new("2026-11-20T12:00:00Z");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let engine = open_log(&path, &clock);
    ingest_examples(&engine, OWNER, 0..10);
    let mut below = xorshift(0x2545_f491_4f6c_dd1d);
    let mut previous = Vec::new();
    let mut changed = 0;
    for step in 0..12 {
        let built = all_page_reads(&engine, OWNER);
        let kept = all_page_reads(&engine, OWNER);
        assert_eq!(built, kept, "step {step}: pages read back differently");
        assert!(
            kept.iter().any(|(.., attached, _)| !attached.is_empty()),
            "step {step}: the examples attach no meeting link to any entity"
        );
        assert_eq!(
            kept,
            all_page_reads(&open_log(&path, &clock), OWNER),
            "step {step}"
        );
        for (id, entity, claims, links, attached, _) in &kept {
            let mut written = None;
            engine
                .write(OWNER, |tx| {
                    written = Some((
                        tx.find_entity(id)?,
                        tx.list_projected_claims(id)?,
                        tx.list_resource_links_by_entity(id)?,
                        tx.list_attached_links(id)?,
                    ));
                    Ok(())
                })
                .unwrap();
            assert_eq!(
                written,
                Some((
                    entity.clone(),
                    claims.clone(),
                    links.clone(),
                    attached.clone()
                )),
                "step {step}: {id}"
            );
        }
        if kept != previous {
            changed += 1;
        }
        previous = kept;
        random_write_with(&engine, &path, &clock, step, &mut below, open_log);
    }
    assert!(changed >= 10, "only {changed} steps changed a page");
}
