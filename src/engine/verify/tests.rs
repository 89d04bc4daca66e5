//! Data verification's unit tests: sealing and reading sectors, the block table's locks and
//! versions, and what each kind of error is found as.

use super::*;
use crate::engine::reduce::POOL;

fn map(size: u64, block: u64) -> VerifyMap {
    VerifyMap::new(
        &[
            MapTarget {
                size_bytes: size,
                prepared_id: Some(11),
            },
            MapTarget {
                size_bytes: size,
                prepared_id: Some(22),
            },
        ],
        block,
        777,
        true,
    )
}

fn prepared(size: usize, id: u64) -> Vec<u8> {
    let mut data = vec![0xA5u8; size];
    crate::engine::buf::fill_random(&mut data, 5);
    seal_prepared(&mut data, id, 0);
    data
}

fn write(m: &VerifyMap, disk: &mut [u8], target: u32, off: u64, len: u32) {
    assert!(m.lock(target, off, len, true));
    let mut buf = vec![0u8; len as usize];
    crate::engine::buf::fill_random(&mut buf, off);
    m.seal(&mut buf, target, off, len, false);
    disk[off as usize..off as usize + len as usize].copy_from_slice(&buf);
    m.written(target, off, len, true);
}

fn read(m: &VerifyMap, disk: &[u8], target: u32, off: u64, len: u32) -> VerifyCounts {
    let mut c = VerifyCounts::default();
    assert!(m.lock(target, off, len, false));
    m.read(
        &disk[off as usize..off as usize + len as usize],
        target,
        off,
        len,
        true,
        "run",
        0,
        &mut c,
    );
    c
}

#[test]
fn prepared_and_written_blocks_check_clean() {
    let m = map(64 << 10, 4096);
    let mut disk = prepared(64 << 10, 11);
    assert_eq!(read(&m, &disk, 0, 0, 16384).errors(), 0);
    write(&m, &mut disk, 0, 8192, 8192);
    write(&m, &mut disk, 0, 8192, 4096);
    let c = read(&m, &disk, 0, 0, 65536);
    assert_eq!((c.blocks_checked, c.errors()), (16, 0), "{c:?}");
}

#[test]
fn each_kind_of_damage_is_told_apart() {
    let m = map(64 << 10, 4096);
    let mut disk = prepared(64 << 10, 11);
    // Corrupted: a flipped byte.
    disk[100] ^= 1;
    assert_eq!(read(&m, &disk, 0, 0, 4096).corrupted, 1);
    // Lost: a write acknowledged but never stored.
    let before = disk.clone();
    write(&m, &mut disk, 0, 4096, 4096);
    let c = read(&m, &before, 0, 4096, 4096);
    assert_eq!(c.lost, 1, "{c:?}");
    // Torn: only the first half of a write stored.
    let old = disk[8192..12288].to_vec();
    write(&m, &mut disk, 0, 8192, 4096);
    disk[8192 + 2048..12288].copy_from_slice(&old[2048..]);
    let c = read(&m, &disk, 0, 8192, 4096);
    assert_eq!(c.torn, 1, "{c:?}");
    // Misdirected: the block of another offset.
    let other = disk[16384..20480].to_vec();
    disk[20480..24576].copy_from_slice(&other);
    let c = read(&m, &disk, 0, 20480, 4096);
    assert_eq!(c.misdirected, 1, "{c:?}");
    assert!(c.first_errors[0].found.contains("offset 16384"), "{c:?}");
    // Misdirected from another target.
    let t1 = prepared(64 << 10, 22);
    disk[24576..28672].copy_from_slice(&t1[24576..28672]);
    let c = read(&m, &disk, 0, 24576, 4096);
    assert_eq!(c.misdirected, 1);
    assert!(c.first_errors[0].found.contains("target 1"), "{c:?}");
}

#[test]
fn locks_exclude_writers_and_share_readers() {
    let m = map(64 << 10, 4096);
    assert!(m.lock(0, 0, 8192, false));
    assert!(m.lock(0, 4096, 8192, false));
    assert!(!m.lock(0, 4096, 4096, true));
    // All or nothing: block 2 was free but must not stay locked.
    assert!(!m.lock(0, 8192, 8192, true) || panic!("block 1 is read-locked"));
    assert!(m.lock(0, 12288, 4096, true));
    m.written(0, 12288, 4096, true);
    let mut c = VerifyCounts::default();
    m.read(&[], 0, 0, 8192, false, "run", 0, &mut c);
    m.read(&[], 0, 4096, 8192, false, "run", 0, &mut c);
    assert!(m.lock(0, 0, 16384, true));
}

#[test]
fn failed_writes_leave_blocks_unchecked_until_rewritten() {
    let m = map(16 << 10, 4096);
    let mut disk = prepared(16 << 10, 11);
    assert!(m.lock(0, 0, 4096, true));
    m.written(0, 0, 4096, false);
    disk[10] ^= 0xFF;
    let c = read(&m, &disk, 0, 0, 4096);
    assert_eq!((c.blocks_unchecked, c.errors()), (1, 0));
    write(&m, &mut disk, 0, 0, 4096);
    assert_eq!(read(&m, &disk, 0, 0, 4096).blocks_checked, 1);
    assert_eq!(m.written_ranges(0, 1 << 20), vec![(0, 4096)]);
}

#[test]
fn block_size_is_the_common_divisor() {
    assert_eq!(block_size([4096, 8192, 4096]), Some(4096));
    assert_eq!(block_size([32768, 4096, 512]), Some(512));
    assert_eq!(block_size([1000]), None);
}

#[test]
fn written_ranges_are_split() {
    let m = map(64 << 10, 4096);
    let mut disk = prepared(64 << 10, 11);
    for off in [0u64, 4096, 8192, 20480] {
        write(&m, &mut disk, 0, off, 4096);
    }
    assert_eq!(
        m.written_ranges(0, 8192),
        vec![(0, 8192), (8192, 4096), (20480, 4096)]
    );
}

#[test]
fn reduced_data_still_tells_damage_apart() {
    let asked = crate::job::data::DataReduction {
        compress: 3.0,
        dedupe: 4.0,
        unit_bytes: 4096,
    };
    let m = map(64 << 10, 4096).with_reduction(asked);
    let r = m.reduce.unwrap();
    let mut disk = prepared(64 << 10, 11);
    for off in (0..65536).step_by(4096) {
        write(&m, &mut disk, 0, off, 4096);
    }
    let c = read(&m, &disk, 0, 0, 65536);
    assert_eq!((c.blocks_checked, c.errors()), (16, 0), "{c:?}");
    // Every reduced sector's header is masked, copies and unique data alike; unmasked, it is
    // the plain header. Prepared data stays in the clear.
    assert!(disk.chunks(SECTOR).all(|s| s[..8] != MAGIC));
    assert!(prepared(4096, 11).chunks(SECTOR).all(|s| s[..8] == MAGIC));
    let mut clear = disk[..SECTOR].to_vec();
    super::mask_header(&mut clear);
    assert_eq!(clear[..8], MAGIC);
    // Some blocks hold copies, some unique data.
    let copy = |off: u64| r.choice(m.targets[0].id, off, 1).is_some();
    let copies: Vec<u64> = (0..16).map(|b| b * 4096).filter(|&o| copy(o)).collect();
    assert!(!copies.is_empty() && copies.len() < 16, "{copies:?}");
    // Corrupted: a flipped byte, in a copy and in unique data.
    for off in [
        copies[0],
        (0..65536).step_by(4096).find(|&o| !copy(o)).unwrap(),
    ] {
        // In the payload, in the masked header (the target's identity), in the tag.
        for at in [700, 20, 50] {
            let mut bad = disk.clone();
            bad[off as usize + at] ^= 1;
            assert_eq!(read(&m, &bad, 0, off, 4096).corrupted, 1, "{off} + {at}");
        }
    }
    // Lost and torn: rewrite a block until its content changes kind or entry.
    let off = copies[0];
    let before = disk.clone();
    let mut v = 1;
    while r.choice(m.targets[0].id, off, v + 1) == r.choice(m.targets[0].id, off, 1) {
        write(&m, &mut disk, 0, off, 4096);
        v += 1;
    }
    let old = disk.clone();
    write(&m, &mut disk, 0, off, 4096);
    let mut lost = disk.clone();
    lost[off as usize..off as usize + 4096]
        .copy_from_slice(&before[off as usize..off as usize + 4096]);
    let c = read(&m, &lost, 0, off, 4096);
    assert_eq!(c.lost, 1, "{c:?}");
    let mut torn = disk.clone();
    let half = off as usize + 2048;
    torn[half..half + 2048].copy_from_slice(&old[half..half + 2048]);
    let c = read(&m, &torn, 0, off, 4096);
    assert_eq!(c.torn, 1, "{c:?}");
    // A copy of an entry this place never held is told as misdirected; a unique block of
    // another offset too.
    let held: Vec<u64> = (1..=v + 1)
        .filter_map(|k| r.choice(m.targets[0].id, off, k))
        .collect();
    let mut other = vec![0u8; 4096];
    let entry = (0..POOL).find(|e| !held.contains(e)).unwrap();
    for (i, s) in other.chunks_exact_mut(SECTOR).enumerate() {
        r.seal_copy(s, entry, m.run, i as u64, true);
    }
    let mut wrong = disk.clone();
    wrong[off as usize..off as usize + 4096].copy_from_slice(&other);
    let c = read(&m, &wrong, 0, off, 4096);
    assert_eq!(c.misdirected, 1, "{c:?}");
    assert!(c.first_errors[0].found.contains("duplicate"), "{c:?}");
}
