//! Storage faults below the engine, injected through a redb `StorageBackend`:
//!
//! * power loss after every I/O operation of a 20-turn workload (the writes that no sync made
//!   durable are lost, the last one torn, or a random subset of them kept as a disk cache may
//!   reorder them): the image must open, hold whole turns only, and keep every turn `append`
//!   reported saved;
//! * failing `write`, `set_len` and `sync_data` (a full disk and EIO), transient and persistent:
//!   `append` fails with a storage error and changes nothing, the engine carries on after a
//!   transient fault without losing or duplicating a turn, and the bytes left behind by a
//!   persistent one still open;
//! * both while a save is compacted (`Engine::compact`): a failure is a storage error that
//!   changes no world, and whatever power loss or a failing disk leaves opens with every turn.

mod support;

use redb::StorageBackend;
use redb::backends::InMemoryBackend;
use rp_core::store::RedbStore;
use rp_core::{Engine, ErrorKind};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use support::{Reference, Rng, WORLD_NAME, batch, options};

/// The name the stores report (errors must mention it).
const NAME: &str = "faulty-save.rp";
/// Snapshots every this many events (the 20-turn workload writes several).
const SNAPSHOT_EVERY: u64 = 30;

/// `rp_core::store::BackendFactory` (not re-exported by `rp_core::store`).
type Factory = Arc<dyn Fn() -> io::Result<Box<dyn StorageBackend>> + Send + Sync>;

// ---------------------------------------------------------------------------------------------
// A simulated disk.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Write,
    SetLen,
    Sync,
}

#[derive(Clone, Debug)]
enum Op {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
    Sync,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FaultError {
    /// `ENOSPC`.
    Full,
    /// `EIO`.
    Eio,
}

impl FaultError {
    fn to_io(self) -> io::Error {
        match self {
            FaultError::Full => io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on device (injected)",
            ),
            FaultError::Eio => io::Error::from_raw_os_error(libc::EIO),
        }
    }
}

/// Fail the operations of `kind`: let `skip` of them through, then fail `fails` of them
/// (`u32::MAX`: all of them, a persistent fault).
#[derive(Clone, Copy, Debug)]
struct Fault {
    kind: OpKind,
    skip: u32,
    fails: u32,
    error: FaultError,
}

const PERSISTENT: u32 = u32::MAX;

#[derive(Debug, Default)]
struct DiskState {
    live: Vec<u8>,
    trace: Vec<Op>,
    record: bool,
    fault: Option<Fault>,
    /// Operations failed so far.
    hits: u32,
}

impl DiskState {
    fn inject(&mut self, kind: OpKind) -> io::Result<()> {
        let Some(f) = self.fault.as_mut().filter(|f| f.kind == kind) else {
            return Ok(());
        };
        if f.skip > 0 {
            f.skip -= 1;
        } else if f.fails > 0 {
            if f.fails != PERSISTENT {
                f.fails -= 1;
            }
            self.hits += 1;
            return Err(f.error.to_io());
        }
        Ok(())
    }
}

/// A disk in memory shared by every backend handle made from it: a reopened database sees the
/// bytes the previous handle left. Records every mutating operation when asked to, and fails
/// operations as its [`Fault`] says.
#[derive(Clone, Debug, Default)]
struct Disk(Arc<Mutex<DiskState>>);

impl Disk {
    fn recording() -> Disk {
        let d = Disk::default();
        d.0.lock().unwrap().record = true;
        d
    }

    fn with_bytes(bytes: Vec<u8>) -> Disk {
        let d = Disk::default();
        d.0.lock().unwrap().live = bytes;
        d
    }

    fn factory(&self) -> Factory {
        let disk = self.clone();
        Arc::new(move || Ok(Box::new(disk.clone()) as Box<dyn StorageBackend>))
    }

    fn ops(&self) -> usize {
        self.0.lock().unwrap().trace.len()
    }

    fn take_trace(&self) -> Vec<Op> {
        std::mem::take(&mut self.0.lock().unwrap().trace)
    }

    fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().live.clone()
    }

    fn arm(&self, fault: Option<Fault>) {
        let mut s = self.0.lock().unwrap();
        s.fault = fault;
        s.hits = 0;
    }

    fn hits(&self) -> u32 {
        self.0.lock().unwrap().hits
    }
}

impl StorageBackend for Disk {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.lock().unwrap().live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let s = self.0.lock().unwrap();
        let start = offset as usize;
        let end = start
            .checked_add(out.len())
            .filter(|e| *e <= s.live.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(&s.live[start..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut s = self.0.lock().unwrap();
        s.inject(OpKind::SetLen)?;
        s.live.resize(len as usize, 0);
        if s.record {
            s.trace.push(Op::SetLen(len));
        }
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut s = self.0.lock().unwrap();
        s.inject(OpKind::Sync)?;
        if s.record {
            s.trace.push(Op::Sync);
        }
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut s = self.0.lock().unwrap();
        s.inject(OpKind::Write)?;
        apply_write(&mut s.live, offset, data);
        if s.record {
            s.trace.push(Op::Write {
                offset,
                data: data.to_vec(),
            });
        }
        Ok(())
    }
}

fn apply_write(bytes: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let start = offset as usize;
    if bytes.len() < start + data.len() {
        bytes.resize(start + data.len(), 0);
    }
    bytes[start..start + data.len()].copy_from_slice(data);
}

fn apply(bytes: &mut Vec<u8>, op: &Op) {
    match op {
        Op::Write { offset, data } => apply_write(bytes, *offset, data),
        Op::SetLen(len) => bytes.resize(*len as usize, 0),
        Op::Sync => {}
    }
}

/// Opens `bytes` as a save in a fresh redb `InMemoryBackend` (a new copy at every reopen).
fn open_image(bytes: Vec<u8>) -> rp_core::Result<Engine> {
    let image = Arc::new(bytes);
    let factory: Factory = Arc::new(move || {
        let b = InMemoryBackend::new();
        b.set_len(image.len() as u64)?;
        b.write(0, &image)?;
        Ok(Box::new(b) as Box<dyn StorageBackend>)
    });
    let store = RedbStore::with_backend(NAME, factory)?;
    Engine::from_store(Box::new(store), options(SNAPSHOT_EVERY))
}

// ---------------------------------------------------------------------------------------------
// Power loss.

const TURNS: u64 = 20;

/// What a disk may hold after losing power with the operations `unsynced` (indices into the
/// trace) issued since the last completed sync.
#[derive(Clone, Copy, Debug)]
enum Loss {
    /// Every unsynced operation lost.
    Clean,
    /// Every unsynced operation lost but the last, which is torn (a strict prefix of it lands).
    TornLast,
    /// Every unsynced operation landed (power lost just before the sync returned).
    AllLanded,
    /// Written back in order: a random number of the unsynced operations landed, the next one
    /// maybe torn.
    InOrder,
    /// A random subset of the unsynced operations landed, some torn: what a disk cache that
    /// reorders writes may leave.
    Reordered,
}

fn torn(op: &Op, rng: &mut Rng) -> Op {
    match op {
        Op::Write { offset, data } if data.len() > 1 => Op::Write {
            offset: *offset,
            data: data[..1 + rng.index(data.len() - 1)].to_vec(),
        },
        other => other.clone(),
    }
}

fn crash_image(durable: &[u8], unsynced: &[&Op], loss: Loss, rng: &mut Rng) -> Vec<u8> {
    let mut image = durable.to_vec();
    match loss {
        Loss::Clean => {}
        Loss::TornLast => {
            if let Some(last) = unsynced.last() {
                apply(&mut image, &torn(last, rng));
            }
        }
        Loss::AllLanded => unsynced.iter().for_each(|op| apply(&mut image, op)),
        Loss::InOrder => {
            let landed = rng.index(unsynced.len() + 1);
            unsynced[..landed]
                .iter()
                .for_each(|op| apply(&mut image, op));
            if let Some(next) = unsynced.get(landed)
                && rng.chance(1, 2)
            {
                apply(&mut image, &torn(next, rng));
            }
        }
        Loss::Reordered => {
            for op in unsynced {
                match rng.below(20) {
                    0..=9 => apply(&mut image, op),
                    10..=12 => apply(&mut image, &torn(op, rng)),
                    _ => {}
                }
            }
        }
    }
    image
}

#[test]
fn power_loss_after_any_io_operation_keeps_whole_saved_turns() {
    let seed = support::seed("power_loss_after_any_io_operation_keeps_whole_saved_turns");
    let mut rng = Rng::new(seed);
    let started = Instant::now();

    // Pass 1: run the workload on a recording disk, noting when each append returned.
    let disk = Disk::recording();
    let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
    let mut engine =
        Engine::new_in(Box::new(store), WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create");
    let created = disk.ops();
    // confirmed_at[k]: the number of operations done when the append of turn k returned.
    let mut confirmed_at = Vec::new();
    for k in 0..TURNS {
        let events = batch(k, engine.world());
        engine.append(events).expect("append");
        confirmed_at.push(disk.ops());
    }
    drop(engine); // its shutdown writes are crash points too
    let trace = disk.take_trace();
    let count = |kind: fn(&Op) -> bool| trace.iter().filter(|o| kind(o)).count();
    eprintln!(
        "workload: {} I/O operations ({} writes, {} set_len, {} syncs), the world created \
         after {created}, {} bytes",
        trace.len(),
        count(|o| matches!(o, Op::Write { .. })),
        count(|o| matches!(o, Op::SetLen(_))),
        count(|o| matches!(o, Op::Sync)),
        disk.bytes().len()
    );
    assert!(
        trace
            .iter()
            .any(|o| matches!(o, Op::SetLen(l) if *l > 1 << 20)),
        "the workload should grow the file"
    );
    assert!(
        snapshot_parts(disk.bytes()) > 0,
        "the workload should store a snapshot in parts"
    );

    // Pass 2: replay the trace; after each operation, lose power in a few ways.
    let mut reference = Reference::new();
    let mut live = Vec::new();
    let mut durable = Vec::new();
    let mut unsynced: Vec<&Op> = Vec::new();
    let mut checked = 0usize;
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for k in 0..=trace.len() {
        // Power is lost after operations 0..k.
        let saved = confirmed_at.iter().filter(|&&c| c <= k).count() as u64;
        let started_turns = confirmed_at.iter().filter(|&&c| c < k).count() as u64 + 1;
        let random = [Loss::TornLast, Loss::InOrder, Loss::Reordered][rng.index(3)];
        let losses: &[Loss] = if unsynced.is_empty() {
            &[Loss::Clean]
        } else {
            &[Loss::Clean, Loss::AllLanded, random]
        };
        for &loss in losses {
            let image = crash_image(&durable, &unsynced, loss, &mut rng);
            let ctx = format!(
                "seed {seed}: power lost after I/O operation {k} of {} ({loss:?}, {} unsynced \
                 operations, {saved} turns saved)",
                trace.len(),
                unsynced.len()
            );
            let write_after = rng.chance(1, 4);
            let outcome = check_crash_image(
                image,
                k >= created,
                (saved, started_turns),
                &mut reference,
                &ctx,
                write_after,
            );
            *outcomes.entry(outcome).or_default() += 1;
            checked += 1;
        }
        if let Some(op) = trace.get(k) {
            take_step(op, &mut live, &mut durable, &mut unsynced);
        }
    }
    eprintln!(
        "{checked} crash images checked in {:?}: {outcomes:#?}",
        started.elapsed()
    );
}

/// How many snapshot parts (`rp_snapshot_parts`) the save in `bytes` holds.
fn snapshot_parts(bytes: Vec<u8>) -> u64 {
    use redb::{ReadableDatabase, ReadableTableMetadata, TableDefinition};
    const PARTS: TableDefinition<(u64, u64, u32), &[u8]> =
        TableDefinition::new("rp_snapshot_parts");
    let backend = InMemoryBackend::new();
    backend.set_len(bytes.len() as u64).expect("set_len");
    backend.write(0, &bytes).expect("write");
    let db = redb::Database::builder()
        .create_with_backend(backend)
        .expect("the save opens with redb");
    let txn = db.begin_read().expect("read");
    txn.open_table(PARTS)
        .map(|t| t.len().expect("len"))
        .unwrap_or(0)
}

/// Opens a crash image and checks it; returns a short description of the outcome. `turns` is
/// (turns reported saved, turns started) at the crash.
fn check_crash_image(
    image: Vec<u8>,
    world_created: bool,
    (saved, started_turns): (u64, u64),
    reference: &mut Reference,
    ctx: &str,
    write_after: bool,
) -> String {
    let mut engine = match open_image(image) {
        Ok(engine) => engine,
        Err(e) if !world_created => {
            // Power lost while the save was being created: there is no world to keep, but
            // opening must still fail cleanly.
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::NotASave | ErrorKind::Corrupt | ErrorKind::Storage
                ),
                "{ctx}: unexpected error kind: {e}"
            );
            support::assert_names_file(&e, NAME, ctx);
            return format!("during creation: {}", e.kind());
        }
        Err(e) => panic!("{ctx}: the crash image does not open: {e}"),
    };
    let m = reference.check(&engine, ctx);
    assert!(
        m >= saved,
        "{ctx}: turns {m}..{saved} were reported saved but are gone"
    );
    assert!(
        m <= started_turns,
        "{ctx}: {m} turns on disk but only {started_turns} were started"
    );
    if write_after {
        let events = batch(m, engine.world());
        engine
            .append(events)
            .unwrap_or_else(|e| panic!("{ctx}: appending after recovery failed: {e}"));
        assert_eq!(
            reference.check(&engine, ctx),
            m + 1,
            "{ctx}: after recovery"
        );
    }
    if !world_created {
        "during creation: opens".into()
    } else if m == saved {
        "the saved turns".into()
    } else {
        "the saved turns and the one in flight".into()
    }
}

// ---------------------------------------------------------------------------------------------
// I/O errors and a full disk.

/// Saves holding turns `0..t` for each `t`, cleanly closed, and the operations of each kind
/// (write, set_len, sync) that appending turn `t` to a reopened `images[t]` does.
struct Fixture {
    images: Vec<Vec<u8>>,
    counts: Vec<[u32; 3]>,
}

fn open_disk(disk: &Disk) -> Engine {
    let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
    Engine::from_store(Box::new(store), options(SNAPSHOT_EVERY)).expect("open")
}

fn fixture() -> Fixture {
    let disk = Disk::default();
    let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
    drop(Engine::new_in(Box::new(store), WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create"));
    let mut images = vec![disk.bytes()];
    let mut counts = Vec::new();
    for t in 0..TURNS {
        let disk = Disk::with_bytes(images[t as usize].clone());
        disk.0.lock().unwrap().record = true;
        let mut engine = open_disk(&disk);
        let before = disk.ops();
        let events = batch(t, engine.world());
        engine.append(events).expect("append");
        let trace = disk.0.lock().unwrap().trace[before..].to_vec();
        let n = |kind: OpKind| {
            trace
                .iter()
                .filter(|o| match o {
                    Op::Write { .. } => kind == OpKind::Write,
                    Op::SetLen(_) => kind == OpKind::SetLen,
                    Op::Sync => kind == OpKind::Sync,
                })
                .count() as u32
        };
        counts.push([n(OpKind::Write), n(OpKind::SetLen), n(OpKind::Sync)]);
        drop(engine);
        images.push(disk.bytes());
    }
    Fixture { images, counts }
}

/// Checks a failed append: a storage error naming the file, and nothing changed in memory.
fn assert_failed_cleanly(
    result: &rp_core::Result<u64>,
    engine: &Engine,
    before: &[u8],
    head: u64,
    ctx: &str,
) {
    let e = result.as_ref().expect_err("checked by the caller");
    assert_eq!(e.kind(), ErrorKind::Storage, "{ctx}: wrong kind: {e}");
    support::assert_names_file(e, NAME, ctx);
    assert_eq!(engine.head(), head, "{ctx}: the head moved: {e}");
    assert!(
        engine.world().to_bytes() == before,
        "{ctx}: the world changed though the append failed: {e}"
    );
}

/// Turn `t` is appended while `fault` is armed. Returns a short description of the outcome.
fn io_fault_scenario(
    image: &[u8],
    t: u64,
    fault: Fault,
    reference: &mut Reference,
    ctx: &str,
) -> String {
    let disk = Disk::with_bytes(image.to_vec());
    let mut engine = open_disk(&disk);
    let before = engine.world().to_bytes();
    let head = engine.head();
    disk.arm(Some(fault));
    let result = engine.append(batch(t, engine.world()));
    if disk.hits() == 0 {
        // The operation was not on this append's path after all.
        result.unwrap_or_else(|e| panic!("{ctx}: failed with no fault injected: {e}"));
        assert_eq!(reference.check(&engine, ctx), t + 1, "{ctx}");
        return "fault not reached".into();
    }
    let outcome = match &result {
        Ok(_) => {
            // The failure came after the commit was durable and redb went on: the turn is
            // saved and reported saved.
            assert_eq!(reference.check(&engine, ctx), t + 1, "{ctx}");
            "ok despite the fault".to_string()
        }
        Err(e) => {
            assert_failed_cleanly(&result, &engine, &before, head, ctx);
            format!("{:?}", e.kind())
        }
    };
    let mut saved = result.is_ok();
    if !saved && fault.fails == PERSISTENT {
        // The engine keeps failing cleanly while the fault lasts (or succeeds, if the failing
        // operation is not needed again)...
        for attempt in 0..2 {
            let ctx = format!("{ctx}, attempt {attempt} while the fault persists");
            let r = engine.append(batch(t, engine.world()));
            if r.is_ok() {
                assert_eq!(reference.check(&engine, &ctx), t + 1, "{ctx}");
                saved = true;
                break;
            }
            assert_failed_cleanly(&r, &engine, &before, head, &ctx);
        }
        // ...and what it leaves on disk opens with every confirmed turn.
        let ctx = format!("{ctx}, the bytes left behind");
        let reopened =
            open_image(disk.bytes()).unwrap_or_else(|e| panic!("{ctx}: do not open: {e}"));
        let m = reference.check(&reopened, &ctx);
        let confirmed = if saved { t + 1 } else { t };
        assert!(
            m == confirmed || m == t + 1,
            "{ctx}: {m} turns where {confirmed} were confirmed"
        );
    }
    if fault.fails == PERSISTENT {
        disk.arm(None); // the disk heals
    }
    // The host retries until the turn is saved.
    let mut attempts = 0;
    while !saved {
        let ctx = format!("{ctx}, retry {attempts}");
        let r = engine.append(batch(t, engine.world()));
        saved = r.is_ok();
        if !saved {
            assert_failed_cleanly(&r, &engine, &before, head, &ctx);
            attempts += 1;
            assert!(
                attempts < 6,
                "{ctx}: the engine does not recover: {}",
                r.expect_err("failed")
            );
        }
    }
    let ctx = format!("{ctx}, after the fault");
    assert_eq!(
        reference.check(&engine, &ctx),
        t + 1,
        "{ctx}: turn {t} lost or duplicated"
    );
    let events = batch(t + 1, engine.world());
    engine
        .append(events)
        .unwrap_or_else(|e| panic!("{ctx}: the next append failed: {e}"));
    assert_eq!(reference.check(&engine, &ctx), t + 2, "{ctx}");
    drop(engine);
    let reopened =
        open_image(disk.bytes()).unwrap_or_else(|e| panic!("{ctx}: the file does not reopen: {e}"));
    assert_eq!(reference.check(&reopened, &ctx), t + 2, "{ctx}: reopened");
    outcome
}

#[test]
fn io_errors_and_a_full_disk_fail_cleanly_and_lose_nothing() {
    let seed = support::seed("io_errors_and_a_full_disk_fail_cleanly_and_lose_nothing");
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let fixture = fixture();
    let mut reference = Reference::new();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    let mut scenarios = 0;
    for (t, per_kind) in fixture.counts.iter().enumerate() {
        let t = t as u64;
        for (kind, &n) in [OpKind::Write, OpKind::SetLen, OpKind::Sync]
            .iter()
            .zip(per_kind)
        {
            for skip in 0..n {
                for fails in [1, 3, PERSISTENT] {
                    let error = if rng.chance(1, 2) {
                        FaultError::Full
                    } else {
                        FaultError::Eio
                    };
                    let fault = Fault {
                        kind: *kind,
                        skip,
                        fails,
                        error,
                    };
                    let ctx = format!(
                        "seed {seed}: turn {t}, {kind:?} #{skip} of {n} fails with {error:?} {}",
                        if fails == PERSISTENT {
                            "persistently".to_string()
                        } else {
                            format!("{fails} time(s)")
                        }
                    );
                    let outcome = io_fault_scenario(
                        &fixture.images[t as usize],
                        t,
                        fault,
                        &mut reference,
                        &ctx,
                    );
                    *outcomes.entry(format!("{kind:?}: {outcome}")).or_default() += 1;
                    scenarios += 1;
                }
            }
        }
    }
    eprintln!(
        "{scenarios} fault scenarios in {:?}: {outcomes:#?}",
        started.elapsed()
    );
}

/// `Durability::Eventual`: `append` returns before the turn is on disk, and a crash may lose
/// the latest turns. An I/O error is not a crash: the engine still holds those turns, so it
/// must either keep them (commit them again) or say that they are gone, never drop them
/// silently.
#[test]
fn eventual_turns_are_not_dropped_silently_after_an_io_error() {
    for kind in [OpKind::Write, OpKind::Sync] {
        let disk = Disk::default();
        let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
        let mut opts = options(SNAPSHOT_EVERY);
        opts.durability = rp_core::Durability::Eventual;
        let mut engine = Engine::new_in(Box::new(store), WORLD_NAME, 0, opts).expect("create");
        engine.flush().expect("flush");
        for k in 0..3 {
            let events = batch(k, engine.world());
            engine.append(events).expect("eventual append");
        }
        let ctx = format!("{kind:?} fails during flush");
        let before = engine.world().to_bytes();
        disk.arm(Some(Fault {
            kind,
            skip: 0,
            fails: 1,
            error: FaultError::Eio,
        }));
        let e = engine.flush().expect_err("the flush must fail");
        assert_eq!(e.kind(), ErrorKind::Storage, "{ctx}: {e}");
        assert!(
            engine.world().to_bytes() == before,
            "{ctx}: the world changed"
        );
        let mut reference = Reference::new();
        match engine.append(batch(3, engine.world())) {
            Ok(head) => {
                assert_eq!(
                    head,
                    support::head_after(4),
                    "{ctx}: the next append succeeded, but the turns appended before the \
                     failed flush are gone without a word"
                );
                assert_eq!(reference.check(&engine, &ctx), 4, "{ctx}");
                drop(engine);
                let reopened = open_image(disk.bytes()).expect("reopen");
                assert_eq!(reference.check(&reopened, &ctx), 4, "{ctx}: reopened");
            }
            Err(e) => {
                // Saying so is fine too, as long as nothing changes behind the host's back.
                assert_eq!(e.kind(), ErrorKind::Storage, "{ctx}: {e}");
                assert!(
                    engine.world().to_bytes() == before,
                    "{ctx}: the world changed"
                );
            }
        }
    }
}

/// A turn's two durable commits (the input at `begin_turn`, the outcome at `finish`) are
/// written while the engine works on: a failing write or sync in either still fails cleanly.
/// `begin_turn` changes nothing and can be retried; a failed `finish` keeps the input and
/// nothing of the outcome; after the disk heals, the next turn works and the file reopens.
#[test]
fn a_turn_whose_commits_fail_changes_nothing_it_did_not_report() {
    use rp_core::turn::{GenerateResult, Step, TurnInput, TurnOptions};
    const WORLD: &str = r#"
[world]
name = "Inn"

[[containers]]
id = "inn"
name = "The Inn"

[[entities]]
id = "you"
name = "You"
player = true
container = "inn"

[[entities]]
id = "mira"
name = "Mira"
container = "inn"
facts = '''
Mira keeps the inn.
$respond
'''
"#;
    let run_turn = |engine: &mut Engine, text: &str, now: i64| -> rp_core::Result<u64> {
        let you = engine.world().find_entity("You").expect("you").id;
        let mut turn =
            engine.begin_turn_with(TurnInput::say(you, text, now), TurnOptions::default())?;
        loop {
            match turn.step()? {
                Step::Generate(_) => turn.provide(GenerateResult::text("Welcome."))?,
                Step::Done => break,
                Step::Embed(_) | Step::Act(_) => unreachable!("no semantic recall or actions here"),
            }
        }
        Ok(turn.finish()?.seq)
    };
    for kind in [OpKind::Write, OpKind::Sync] {
        for at_finish in [false, true] {
            let ctx = format!(
                "{kind:?} fails at {}",
                if at_finish { "finish" } else { "begin" }
            );
            let disk = Disk::default();
            let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
            let mut engine =
                Engine::new_in(Box::new(store), WORLD_NAME, 0, options(0)).expect("create");
            engine.apply_world_file("inn.toml", WORLD).expect("world");
            run_turn(&mut engine, "Good evening.", 1_000).expect("first turn");
            let you = engine.world().find_entity("You").expect("you").id;
            let before = engine.world().to_bytes();
            let head = engine.head();
            let fault = Fault {
                kind,
                skip: 0,
                fails: PERSISTENT,
                error: FaultError::Eio,
            };
            let err = if at_finish {
                let mut turn = engine
                    .begin_turn_with(
                        TurnInput::say(you, "A room, please.", 2_000),
                        TurnOptions::default(),
                    )
                    .expect("begin");
                while let Step::Generate(_) = turn.step().expect("step") {
                    turn.provide(GenerateResult::text("Of course."))
                        .expect("provide");
                }
                disk.arm(Some(fault));
                let err = turn.finish().expect_err("the outcome's commit fails");
                // The input (the clock and the line) stays; nothing of the outcome does.
                assert_eq!(engine.head(), head + 2, "{ctx}");
                let last = engine.world().dialogue().last().map(|u| u.text.clone());
                assert_eq!(last.as_deref(), Some("A room, please."), "{ctx}");
                err
            } else {
                disk.arm(Some(fault));
                let err = engine
                    .begin_turn_with(
                        TurnInput::say(you, "A room, please.", 2_000),
                        TurnOptions::default(),
                    )
                    .map(drop)
                    .expect_err("the input's commit fails");
                assert_eq!(engine.head(), head, "{ctx}: the head moved");
                assert!(
                    engine.world().to_bytes() == before,
                    "{ctx}: the world changed"
                );
                err
            };
            assert_eq!(err.kind(), ErrorKind::Storage, "{ctx}: {err}");
            support::assert_names_file(&err, NAME, &ctx);
            disk.arm(None);
            let seq = run_turn(&mut engine, "A room, please.", 3_000)
                .unwrap_or_else(|e| panic!("{ctx}: the turn after the fault failed: {e}"));
            assert_eq!(seq, engine.head(), "{ctx}");
            let world = engine.world().to_bytes();
            drop(engine);
            let reopened = open_image(disk.bytes()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert!(
                reopened.world().to_bytes() == world,
                "{ctx}: reopened differs"
            );
            let lines: Vec<String> = reopened
                .world()
                .dialogue()
                .map(|u| u.text.clone())
                .collect();
            let expected: &[&str] = if at_finish {
                &[
                    "Good evening.",
                    "Welcome.",
                    "A room, please.",
                    "A room, please.",
                    "Welcome.",
                ]
            } else {
                &["Good evening.", "Welcome.", "A room, please.", "Welcome."]
            };
            assert_eq!(lines, expected, "{ctx}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Compaction.

/// A save with room to give back: the 20-turn workload on `main`, and a branch that grew long
/// (snapshots written and dropped, three entities of ~1.9 MB of facts: the file grows past
/// what `main` holds) and was deleted, so its pages, at the end of the file, are free.
fn compaction_image() -> Vec<u8> {
    let disk = Disk::default();
    let store = RedbStore::with_backend(NAME, disk.factory()).expect("store");
    let mut engine =
        Engine::new_in(Box::new(store), WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create");
    for k in 0..TURNS {
        engine.append(batch(k, engine.world())).expect("append");
    }
    engine.fork(engine.head(), "scratch").expect("fork");
    engine.switch_branch("scratch").expect("switch");
    for k in TURNS..TURNS + 160 {
        engine.append(batch(k, engine.world())).expect("append");
    }
    engine.switch_branch("main").expect("switch");
    engine.delete_branch("scratch").expect("delete");
    drop(engine);
    disk.bytes()
}

/// `Engine::compact` with a failing write, set_len or sync at points spread over its I/O
/// (a full disk and EIO, once and persistently): it fails with a storage error naming the
/// file, the engine keeps its world and carries on, and the bytes left behind open with the
/// same world; once the disk heals, compaction succeeds.
#[test]
fn an_io_failure_while_compacting_fails_cleanly_and_the_save_opens_unchanged() {
    let image = compaction_image();
    let mut reference = Reference::new();

    // What a compaction of the image does, and that it gives room back.
    let disk = Disk::with_bytes(image.clone());
    let mut engine = open_disk(&disk);
    assert_eq!(reference.check(&engine, "before compacting"), TURNS);
    disk.0.lock().unwrap().record = true;
    let done = engine.compact().expect("compact");
    assert!(done.compacted, "{done:?}");
    assert!(disk.bytes().len() < image.len(), "the image shrinks");
    let trace = disk.take_trace();
    let count = |kind: OpKind| {
        trace
            .iter()
            .filter(|o| match o {
                Op::Write { .. } => kind == OpKind::Write,
                Op::SetLen(_) => kind == OpKind::SetLen,
                Op::Sync => kind == OpKind::Sync,
            })
            .count() as u32
    };
    drop(engine);

    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for kind in [OpKind::Write, OpKind::SetLen, OpKind::Sync] {
        let n = count(kind);
        // At most about a dozen points per kind, the first and the last included.
        let mut skips: Vec<u32> = (0..12).map(|i| i * n / 12).collect();
        skips.push(n.saturating_sub(1));
        skips.dedup();
        for skip in skips {
            for (fails, error) in [(1, FaultError::Eio), (PERSISTENT, FaultError::Full)] {
                let ctx =
                    format!("compacting, {kind:?} #{skip} of {n} fails with {error:?} ({fails})");
                let disk = Disk::with_bytes(image.clone());
                let mut engine = open_disk(&disk);
                let world = engine.world().to_bytes();
                disk.arm(Some(Fault {
                    kind,
                    skip,
                    fails,
                    error,
                }));
                let result = engine.compact();
                let outcome = match (&result, disk.hits()) {
                    (Ok(_), 0) => "fault not reached".to_string(),
                    (Ok(_), _) => "ok despite the fault".to_string(),
                    (Err(e), hits) => {
                        assert!(hits > 0, "{ctx}: failed with no fault injected: {e}");
                        assert_eq!(e.kind(), ErrorKind::Storage, "{ctx}: {e}");
                        support::assert_names_file(e, NAME, &ctx);
                        format!("{:?}", e.kind())
                    }
                };
                *outcomes.entry(format!("{kind:?}: {outcome}")).or_default() += 1;
                assert!(
                    engine.world().to_bytes() == world,
                    "{ctx}: the world changed"
                );
                // What is on the disk now opens with the same world.
                let reopened = open_image(disk.bytes())
                    .unwrap_or_else(|e| panic!("{ctx}: the bytes left do not open: {e}"));
                assert_eq!(reference.check(&reopened, &ctx), TURNS, "{ctx}");
                drop(reopened);
                // The disk heals: the engine compacts and plays on.
                disk.arm(None);
                engine
                    .compact()
                    .unwrap_or_else(|e| panic!("{ctx}: compacting after the fault: {e}"));
                assert_eq!(reference.check(&engine, &ctx), TURNS, "{ctx}");
                engine
                    .append(batch(TURNS, engine.world()))
                    .unwrap_or_else(|e| panic!("{ctx}: appending after the fault: {e}"));
                drop(engine);
                let reopened = open_image(disk.bytes())
                    .unwrap_or_else(|e| panic!("{ctx}: the file does not reopen: {e}"));
                assert_eq!(reference.check(&reopened, &ctx), TURNS + 1, "{ctx}");
            }
        }
    }
    eprintln!("compaction fault scenarios: {outcomes:#?}");
    assert!(
        outcomes.keys().any(|k| k.ends_with("Storage")),
        "no fault made a compaction fail: {outcomes:#?}"
    );
}

/// Power lost after any I/O operation of `Engine::compact` (the unsynced operations lost,
/// all landed, torn or reordered): the image opens with every turn, and plays on.
#[test]
fn power_loss_while_compacting_keeps_every_turn() {
    let seed = support::seed("power_loss_while_compacting_keeps_every_turn");
    let mut rng = Rng::new(seed);
    let image = compaction_image();
    let disk = Disk::with_bytes(image.clone());
    let mut engine = open_disk(&disk);
    disk.0.lock().unwrap().record = true;
    engine.compact().expect("compact");
    drop(engine); // closing writes too
    let trace = disk.take_trace();

    let mut reference = Reference::new();
    let mut live = image.clone();
    let mut durable = image;
    let mut unsynced: Vec<&Op> = Vec::new();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for k in 0..=trace.len() {
        let random = [Loss::TornLast, Loss::InOrder, Loss::Reordered][rng.index(3)];
        let losses: &[Loss] = if unsynced.is_empty() {
            &[Loss::Clean]
        } else {
            &[Loss::Clean, Loss::AllLanded, random]
        };
        for &loss in losses {
            let crashed = crash_image(&durable, &unsynced, loss, &mut rng);
            let ctx = format!(
                "seed {seed}: power lost after I/O operation {k} of {} of a compaction \
                 ({loss:?}, {} unsynced operations)",
                trace.len(),
                unsynced.len()
            );
            let write_after = rng.chance(1, 4);
            let outcome = check_crash_image(
                crashed,
                true,
                (TURNS, TURNS),
                &mut reference,
                &ctx,
                write_after,
            );
            *outcomes.entry(outcome).or_default() += 1;
        }
        if let Some(op) = trace.get(k) {
            take_step(op, &mut live, &mut durable, &mut unsynced);
        }
    }
    eprintln!(
        "{} crash images of a compaction checked: {outcomes:#?}",
        outcomes.values().sum::<usize>()
    );
}

/// Takes one step of a recorded trace: `live` is the file as the process sees it, `durable` as
/// a power cut would leave it (the last sync), `unsynced` what was done since.
fn take_step<'a>(
    op: &'a Op,
    live: &mut Vec<u8>,
    durable: &mut Vec<u8>,
    unsynced: &mut Vec<&'a Op>,
) {
    apply(live, op);
    if matches!(op, Op::Sync) {
        durable.clone_from(live);
        unsynced.clear();
    } else {
        unsynced.push(op);
    }
}
