//! Other tools' files as text, in the encodings Windows tools and editors write them: UTF-8
//! (with or without a byte-order mark), UTF-16 with its byte-order mark (little or big
//! endian: Notepad's "Unicode", PowerShell's `Out-File`, DiskSpd's XML as some editors save
//! it), and, for bytes that are not UTF-8, Windows-1252 (an Iometer `.icf` or a vdbench file
//! saved by an older Windows editor with an accent or a `µ` in a comment). Decoding is one
//! pass over the bytes: linear in the file's size.

/// How a file's bytes were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8, without a byte-order mark.
    Utf8,
    /// UTF-8 after a byte-order mark (`EF BB BF`).
    Utf8Bom,
    /// UTF-16 little endian after its byte-order mark (`FF FE`).
    Utf16Le,
    /// UTF-16 big endian after its byte-order mark (`FE FF`).
    Utf16Be,
    /// Windows-1252 (bytes that are not UTF-8 and have no byte-order mark).
    Windows1252,
}

/// What Windows-1252 puts at 0x80..=0x9F (the rest of its bytes are Latin-1's, the code point
/// of the same number); the five bytes it leaves undefined are read as the C1 controls of
/// their number, as browsers read them.
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

/// `bytes` as text and the encoding read; an error for UTF-16 that is not (a lone surrogate,
/// an odd number of bytes), naming the byte.
pub(crate) fn decode(bytes: &[u8]) -> Result<(String, Encoding), String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return match std::str::from_utf8(rest) {
            Ok(s) => Ok((s.to_string(), Encoding::Utf8Bom)),
            Err(e) => Err(format!(
                "byte {} is not UTF-8 text, though the file starts with UTF-8's byte-order mark",
                e.valid_up_to() + 3
            )),
        };
    }
    for (bom, big, encoding) in [
        ([0xFF, 0xFE], false, Encoding::Utf16Le),
        ([0xFE, 0xFF], true, Encoding::Utf16Be),
    ] {
        if let Some(rest) = bytes.strip_prefix(&bom) {
            return utf16(rest, big).map(|s| (s, encoding));
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((s.to_string(), Encoding::Utf8)),
        Err(_) => Ok((windows_1252(bytes), Encoding::Windows1252)),
    }
}

fn utf16(bytes: &[u8], big: bool) -> Result<String, String> {
    if bytes.len() % 2 != 0 {
        return Err(format!(
            "the file starts with UTF-16's byte-order mark but holds an odd number of bytes ({}): it is not UTF-16 text",
            bytes.len() + 2
        ));
    }
    let units = bytes.chunks_exact(2).map(|p| {
        if big {
            u16::from_be_bytes([p[0], p[1]])
        } else {
            u16::from_le_bytes([p[0], p[1]])
        }
    });
    let mut out = String::with_capacity(bytes.len() / 2);
    for (i, c) in char::decode_utf16(units).enumerate() {
        match c {
            Ok(c) => out.push(c),
            Err(_) => {
                return Err(format!(
                    "bytes {}-{} are half of a UTF-16 character pair (a lone surrogate): it is not UTF-16 text",
                    2 + 2 * i,
                    3 + 2 * i
                ));
            }
        }
    }
    Ok(out)
}

fn windows_1252(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)],
            b => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_encodings_read_as_their_tools_write_them() {
        let text = "'Test Description\n\tµs — café\n";
        assert_eq!(
            decode(text.as_bytes()).unwrap(),
            (text.to_string(), Encoding::Utf8)
        );
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(text.as_bytes());
        assert_eq!(decode(&bom).unwrap(), (text.to_string(), Encoding::Utf8Bom));
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for u in text.encode_utf16() {
            le.extend_from_slice(&u.to_le_bytes());
            be.extend_from_slice(&u.to_be_bytes());
        }
        assert_eq!(decode(&le).unwrap(), (text.to_string(), Encoding::Utf16Le));
        assert_eq!(decode(&be).unwrap(), (text.to_string(), Encoding::Utf16Be));
        // Windows-1252: µ is B5, é E9, the em dash 97, the euro sign 80.
        let cp = b"\tcaf\xe9 \xb5s \x97 \x80\n";
        assert_eq!(
            decode(cp).unwrap(),
            ("\tcafé µs — €\n".to_string(), Encoding::Windows1252)
        );
        assert!(
            decode(&[0xFF, 0xFE, 0x41])
                .unwrap_err()
                .contains("odd number")
        );
        assert!(
            decode(&[0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00])
                .unwrap_err()
                .contains("lone surrogate")
        );
    }
}
