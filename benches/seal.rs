//! What sealing and checking verified blocks costs on one core: `cargo bench --bench seal`.
//! Prints nanoseconds per write (seal) and per read (check) for 4 KiB, 64 KiB and 1 MiB I/Os,
//! and the rate in GB/s.

#![allow(clippy::print_stdout)]

use std::time::Instant;
use storlab::testing::{MapTarget, VerifyCounts, VerifyMap};

fn main() {
    const SPAN: u64 = 1 << 29;
    let target = [MapTarget {
        size_bytes: SPAN,
        prepared_id: Some(1),
    }];
    let map = VerifyMap::new(&target, 4096, 7, true);
    let unchecked = VerifyMap::new(&target, 4096, 7, false);
    let mut buf = vec![0u8; 1 << 20];
    println!(
        "{:>9} {:>22} {:>22} {:>22}",
        "I/O", "seal (verify)", "check (verify)", "seal (no verify)"
    );
    for len in [4096u32, 65536, 1 << 20] {
        let n = (1u64 << 30) / u64::from(len);
        let offset = |i: u64| (i * u64::from(len)) % SPAN;
        let buf = &mut buf[..len as usize];
        let t = Instant::now();
        for i in 0..n {
            map.lock(0, offset(i), len, true);
            map.seal(buf, 0, offset(i), len, false);
            map.written(0, offset(i), len, true);
        }
        let seal = t.elapsed().as_secs_f64();
        // Check a block that holds what the map expects: the one written last, at offset 0.
        map.lock(0, 0, len, true);
        map.seal(buf, 0, 0, len, false);
        map.written(0, 0, len, true);
        let mut counts = VerifyCounts::default();
        let t = Instant::now();
        for _ in 0..n {
            map.lock(0, 0, len, false);
            map.read(buf, 0, 0, len, true, "run", 0, &mut counts);
        }
        let check = t.elapsed().as_secs_f64();
        assert_eq!(counts.errors(), 0, "the bench checks valid blocks");
        let t = Instant::now();
        for i in 0..n {
            unchecked.seal(buf, 0, offset(i), len, false);
        }
        let plain = t.elapsed().as_secs_f64();
        let row = |secs: f64| {
            format!(
                "{:>9.0} ns {:>5.1} GB/s",
                secs * 1e9 / n as f64,
                (n * u64::from(len)) as f64 / secs / 1e9
            )
        };
        println!("{:>9} {} {} {}", len, row(seal), row(check), row(plain));
        std::hint::black_box(&counts);
    }
}
