//! The disk's floor: what any durable append must at least pay.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// A plain file, zero-filled and synced ahead of time, that takes each turn's bytes with one
/// `pwrite` at the next offset and one `fdatasync`: what any durable append must at least pay.
pub struct FsyncFloor {
    file: File,
    at: u64,
    len: u64,
}

impl FsyncFloor {
    /// A floor file of `len` bytes at `path`.
    pub fn create(path: &Path, len: u64) -> FsyncFloor {
        let mut file = File::create(path).expect("create floor file");
        let zeros = vec![0u8; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            file.write_all(&zeros[..n]).expect("fill");
            left -= n as u64;
        }
        file.sync_all().expect("sync");
        FsyncFloor { file, at: 0, len }
    }

    /// Writes `records` back to back at the next offset (wrapping), then `fdatasync`.
    pub fn append(&mut self, records: &[Vec<u8>]) {
        use std::os::unix::fs::FileExt;
        let buf: Vec<u8> = records.concat();
        if self.at + buf.len() as u64 > self.len {
            self.at = 0;
        }
        self.file.write_all_at(&buf, self.at).expect("pwrite");
        self.at += buf.len() as u64;
        // SAFETY: the descriptor is open for as long as `self.file` lives.
        let r = unsafe { libc::fdatasync(std::os::unix::io::AsRawFd::as_raw_fd(&self.file)) };
        assert_eq!(
            r,
            0,
            "fdatasync failed: {}",
            std::io::Error::last_os_error()
        );
    }
}
