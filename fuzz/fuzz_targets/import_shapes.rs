//! `storlab::fuzzing::import_shapes` on every input libFuzzer makes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| storlab::fuzzing::import_shapes(data));
