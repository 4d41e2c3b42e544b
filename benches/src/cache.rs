//! The page cache and a process's memory, for cold-start figures: evicting a save's files from
//! the cache (`posix_fadvise(DONTNEED)`, which needs no privilege and touches no other file),
//! checking how much of them is still resident (`mincore`), and the peak resident set.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Every regular file at `path` (itself, or under it when it is a directory).
pub fn files_under(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(p) = stack.pop() {
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => {
                if let Ok(dir) = std::fs::read_dir(&p) {
                    stack.extend(dir.flatten().map(|e| e.path()));
                }
            }
            Ok(m) if m.is_file() => out.push(p),
            _ => {}
        }
    }
    out
}

/// The total size in bytes of the files at `path` (a file or a directory).
pub fn bytes_under(path: &Path) -> u64 {
    files_under(path)
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// The bytes the files at `path` take on disk (allocated blocks): less than their size for a
/// sparse file, as a redb file is where it grew but has not written yet.
pub fn disk_bytes_under(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    files_under(path)
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.blocks() * 512)
        .sum()
}

/// Drops the files at each of `paths` from the page cache: each is synced first (the kernel
/// drops only clean pages), then advised `DONTNEED`.
pub fn evict(paths: &[&Path]) {
    for path in paths {
        for file in files_under(path) {
            let Ok(f) = File::open(&file) else { continue };
            let _ = f.sync_all();
            // SAFETY: a valid open descriptor; the call only advises the kernel.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// The fraction (0–1) of the bytes of the files at each of `paths` that sit in the page cache.
pub fn resident(paths: &[&Path]) -> f64 {
    let page = page_size();
    let (mut total, mut cached) = (0usize, 0usize);
    for path in paths {
        for file in files_under(path) {
            let Ok(f) = File::open(&file) else { continue };
            let Ok(len) = f.metadata().map(|m| m.len() as usize) else {
                continue;
            };
            if len == 0 {
                continue;
            }
            let pages = len.div_ceil(page);
            total += pages;
            // SAFETY: a read-only shared mapping of an open file of `len` bytes, unmapped
            // below; `mincore` writes one byte per page into a vector of that many bytes.
            unsafe {
                let map = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                );
                if map == libc::MAP_FAILED {
                    continue;
                }
                let mut vec = vec![0u8; pages];
                if libc::mincore(map, len, vec.as_mut_ptr()) == 0 {
                    cached += vec.iter().filter(|b| **b & 1 == 1).count();
                }
                libc::munmap(map, len);
            }
        }
    }
    if total == 0 {
        0.0
    } else {
        cached as f64 / total as f64
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

/// This process's peak resident set in KiB (`VmHWM` of /proc/self/status), if known.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_read_is_resident_and_evicting_drops_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        drop(f);
        let _ = std::fs::read(&path).unwrap();
        assert!(resident(&[&path]) > 0.9);
        evict(&[dir.path()]);
        // tmpfs keeps its pages whatever the advice; elsewhere they are gone.
        let after = resident(&[&path]);
        assert!((0.0..=1.0).contains(&after));
        assert_eq!(bytes_under(dir.path()), 1 << 20);
        assert!(disk_bytes_under(dir.path()) >= 1 << 20);
        assert!(peak_rss_kib().unwrap() > 0);
    }
}
