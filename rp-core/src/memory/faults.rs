//! Tests only: a directory for the memory index kept beside a save that fails part-way, as a
//! crash would leave it. After a given number of writing steps (opening a file for writing, a
//! write, finishing a file, an atomic write, a deletion, a directory sync) every later one
//! fails, and the step that trips writes half its bytes first; reading keeps working. What the
//! directory holds then is what a process that died at that step leaves on disk.
//!
//! [`crash_after`] sets it for the indexes this thread opens or builds from then on, until
//! [`Crash`] is dropped.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tantivy::directory::error::{DeleteError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};

thread_local! {
    static CRASH: RefCell<Option<Arc<Steps>>> = const { RefCell::new(None) };
}

/// The writing steps left before the crash, and whether it came.
#[derive(Debug)]
struct Steps {
    allowed: i64,
    left: AtomicI64,
    crashed: AtomicBool,
}

impl Steps {
    /// Takes one step: an error once the crash has come.
    fn take(&self) -> io::Result<()> {
        if self.left.fetch_sub(1, Ordering::SeqCst) <= 0 {
            self.crashed.store(true, Ordering::SeqCst);
            return Err(io::Error::other("injected crash"));
        }
        Ok(())
    }
}

/// While alive, the indexes this thread opens or builds on disk crash after a number of
/// writing steps.
pub(crate) struct Crash(Arc<Steps>);

impl Crash {
    /// Whether the crash came (fewer steps were taken than allowed: it did not).
    pub fn came(&self) -> bool {
        self.0.crashed.load(Ordering::SeqCst)
    }

    /// The writing steps taken so far (the crashing one included).
    pub fn taken(&self) -> u64 {
        (self.0.allowed - self.0.left.load(Ordering::SeqCst)).max(0) as u64
    }
}

impl Drop for Crash {
    fn drop(&mut self) {
        CRASH.with(|c| c.borrow_mut().take());
    }
}

/// Makes the indexes this thread puts on disk crash after `steps` writing steps.
pub(crate) fn crash_after(steps: u64) -> Crash {
    let s = Arc::new(Steps {
        allowed: steps as i64,
        left: AtomicI64::new(steps as i64),
        crashed: AtomicBool::new(false),
    });
    CRASH.with(|c| *c.borrow_mut() = Some(s.clone()));
    Crash(s)
}

/// The crashing directory over `dir`, while a [`Crash`] is alive on this thread.
pub(super) fn directory(dir: &Path) -> Option<Box<dyn Directory>> {
    let steps = CRASH.with(|c| c.borrow().clone())?;
    let inner = MmapDirectory::open(dir).ok()?;
    Some(Box::new(Crashing { inner, steps }))
}

#[derive(Clone, Debug)]
struct Crashing {
    inner: MmapDirectory,
    steps: Arc<Steps>,
}

fn io_arc(e: io::Error) -> Arc<io::Error> {
    Arc::new(e)
}

impl Directory for Crashing {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.steps.take().map_err(|e| DeleteError::IoError {
            io_error: io_arc(e),
            filepath: path.to_owned(),
        })?;
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.steps.take().map_err(|e| OpenWriteError::IoError {
            io_error: io_arc(e),
            filepath: path.to_owned(),
        })?;
        let inner = self.inner.open_write(path)?;
        Ok(io::BufWriter::new(Box::new(CrashingWrite {
            inner,
            steps: self.steps.clone(),
        })))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        // All or nothing, as the directory promises: the crash comes before or after.
        self.steps.take()?;
        self.inner.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.steps.take()?;
        self.inner.sync_directory()
    }

    fn acquire_lock(
        &self,
        lock: &Lock,
    ) -> Result<DirectoryLock, tantivy::directory::error::LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}

struct CrashingWrite {
    inner: WritePtr,
    steps: Arc<Steps>,
}

impl Write for CrashingWrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Err(e) = self.steps.take() {
            // A torn write: half of it reached the file.
            let _ = self.inner.write_all(&buf[..buf.len() / 2]);
            let _ = self.inner.flush();
            return Err(e);
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl TerminatingWrite for CrashingWrite {
    fn terminate_ref(&mut self, token: AntiCallToken) -> io::Result<()> {
        self.steps.take()?;
        self.inner.terminate_ref(token)
    }
}
