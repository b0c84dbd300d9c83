/// Unicode full case folding: the `C` and `F` mappings of CaseFolding.txt, which openapi.yaml's `contains` asks
/// for ("matched case-insensitively, Unicode case folding").
///
/// Why full folding rather than lowercasing or simple folding: a search for "strasse" must find "Straße" and
/// "STRASSE" alike (ß and ẞ fold to "ss"), "ﬁ" folds to "fi", and Greek Σ, σ and final ς all fold to σ, where
/// lowercasing keeps ß and ς apart from "ss" and σ. What it does not do, as CaseFolding.txt's default mappings do
/// not: Turkic rules (I folds to i, İ to i + U+0307, and dotless ı stays ı) and normalization (precomposed "é"
/// and "e" + U+0301 stay different, as they are different bytes everywhere else in a filter). Matching is over
/// scalars, not characters: "s" is found in "ß".
///
/// Why derived here, from the standard library's properties: QuireCore imports no Foundation, and the standard
/// library has every mapping the table holds, though not the table itself. For a scalar that changes when case
/// folded, the fold is the lowercase of its uppercase (ß → SS → ss, ς → Σ → σ, ﬁ → FI → fi, Kelvin sign → K →
/// k), folded again until it stops changing (ẞ → ß → ss). Two exceptions: Cherokee, whose small letters fold to
/// the capitals encoded first, is the one script where that round trip returns the letter itself, and then the
/// uppercase is the fold; and Changes_When_Casefolded is defined on the decomposed form, so some thirty
/// precomposed letters that are folded once decomposed (ǰ, ΐ, ΰ, ι U+1FBE, most Greek letters with perispomeni)
/// say they do not change although the table maps them to that decomposed form: those take the lowercase of
/// their uppercase when it is canonically equivalent to them.
///
/// Checked on every scalar against Python 3.11's `str.casefold()` (CaseFolding.txt of Unicode 14): the same
/// folds wherever Unicode 14 assigns a character; the scalars added since differ only because Python does not
/// know them.
enum CaseFolding {
    /// `text` case-folded.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    static func folded(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars { appendFolded(scalar, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of the fold of the text in `utf8` (invalid sequences become U+FFFD).
    ///
    /// - Complexity: O(*n*) in the length of `utf8`.
    static func appendFolded(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var decoder = UTF8()
        var iterator = utf8.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): appendFolded(scalar, to: &out)
            case .emptyInput: return
            case .error: appendFolded("\u{FFFD}", to: &out)
            }
        }
    }

    /// Appends the UTF-8 bytes of the fold of `scalar`.
    ///
    /// - Complexity: O(1): a table lookup for the Basic Multilingual Plane (``planeZero``), the standard
    ///   library's properties above it.
    @inline(__always)
    static func appendFolded(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        let value = scalar.value
        if value < 0x80 {
            out.append(asciiFolded(UInt8(truncatingIfNeeded: value)))
        } else if value < 0x1_0000 {
            planeZero.appendFold(of: Int(value), to: &out)
        } else {
            fold(scalar) { append($0, to: &out) }
        }
    }

    /// Calls `emit` with each scalar of the fold of `scalar`, derived from the standard library's properties as
    /// the type's comment says.
    ///
    /// - Complexity: O(1), but a few string operations: ``planeZero`` keeps the results for the scalars that
    ///   lists mostly hold.
    static func fold(_ scalar: Unicode.Scalar, depth: Int = 0, _ emit: (Unicode.Scalar) -> Void) {
        if scalar.isASCII {
            emit(Unicode.Scalar(asciiFolded(UInt8(truncatingIfNeeded: scalar.value))))
            return
        }
        let properties = scalar.properties
        guard properties.changesWhenCaseMapped else { return emit(scalar) }
        let uppercase = properties.uppercaseMapping
        var mapping = uppercase.lowercased()
        let roundTrips = mapping.unicodeScalars.count == 1 && mapping.unicodeScalars.first == scalar
        if properties.changesWhenCaseFolded {
            if roundTrips { mapping = uppercase }  // Cherokee
        } else if roundTrips || mapping != String(scalar) {  // `!=`: canonical equivalence
            return emit(scalar)
        }
        for mapped in mapping.unicodeScalars {
            // Two more rounds reach a fixed point for every scalar (checked on all of them); the bound only
            // guarantees that no future table can make this recurse without end.
            if depth < 2 { fold(mapped, depth: depth + 1, emit) } else { emit(mapped) }
        }
    }

    /// The folds of the Basic Multilingual Plane, made once on first use (65,536 property lookups; 128 KiB):
    /// folding text for `contains` then costs a lookup a scalar, where the standard library's case properties
    /// cost a binary search each and their mapping strings more.
    static let planeZero = PlaneZeroFolds()

    /// A fold for each scalar below U+10000: the scalar it folds to, or a marker sending the few that fold to
    /// more than one scalar (ß → ss, ﬁ → fi, ΐ → ΐ) to a small dictionary.
    struct PlaneZeroFolds: Sendable {
        private static let several: UInt16 = 0xFFFF
        private var single: [UInt16]
        private var multiple: [UInt16: [Unicode.Scalar]] = [:]

        init() {
            single = Array(repeating: 0, count: 0x1_0000)
            for value in 0..<0x1_0000 {
                guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenCaseMapped else {
                    single[value] = UInt16(value)  // surrogates, which are not scalars, included
                    continue
                }
                var folded: [Unicode.Scalar] = []
                CaseFolding.fold(scalar) { folded.append($0) }
                if folded.count == 1, folded[0].value < 0xFFFF {
                    single[value] = UInt16(folded[0].value)
                } else {
                    single[value] = Self.several
                    multiple[UInt16(value)] = folded
                }
            }
        }

        /// Appends the UTF-8 of the fold of the scalar `value` (below U+10000, not ASCII).
        @inline(__always)
        func appendFold(of value: Int, to out: inout [UInt8]) {
            let folded = single[value]
            if folded != Self.several {
                CaseFolding.append(Unicode.Scalar(UInt32(folded)) ?? "\u{FFFD}", to: &out)
            } else if let scalars = multiple[UInt16(value)] {
                for scalar in scalars { CaseFolding.append(scalar, to: &out) }
            } else {
                CaseFolding.append("\u{FFFF}", to: &out)  // U+FFFF itself, which folds to itself
            }
        }
    }

    /// The fold of an ASCII byte: A–Z become a–z, every other byte stays. The fold of ASCII text is ASCII.
    @inline(__always)
    static func asciiFolded(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// Appends the UTF-8 of `scalar`.
    @inline(__always)
    static func append(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        let value = scalar.value
        switch value {
        case 0..<0x80:
            out.append(UInt8(value))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | value >> 6))
            out.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | value >> 12))
            out.append(UInt8(0x80 | value >> 6 & 0x3F))
            out.append(UInt8(0x80 | value & 0x3F))
        default:
            out.append(UInt8(0xF0 | value >> 18))
            out.append(UInt8(0x80 | value >> 12 & 0x3F))
            out.append(UInt8(0x80 | value >> 6 & 0x3F))
            out.append(UInt8(0x80 | value & 0x3F))
        }
    }
}
