import QuireCore
import QuireSources
import Testing

@Suite("Order keys, as ORDER BY … COLLATE \"C\" orders")
struct OrderTests {
    /// Whether the texts, as values of `type`, are in strictly ascending order.
    func ascending(_ texts: [String?], _ type: PostgresType, _ comment: Comment? = nil) {
        let values = texts.map { SortValue($0, type: type) }
        for (lower, higher) in zip(values, values.dropFirst()) {
            #expect(lower < higher && !(higher < lower), comment ?? "\(texts)")
        }
    }

    func equal(_ a: String, _ b: String, _ type: PostgresType) {
        #expect(SortValue(a, type: type) == SortValue(b, type: type), "\(a) = \(b)")
        #expect(
            !(SortValue(a, type: type) < SortValue(b, type: type))
                && !(SortValue(b, type: type) < SortValue(a, type: type)))
    }

    @Test("numbers by value: any precision, integers and floats alike, NaN above Infinity")
    func numbers() {
        ascending(
            [
                "-Infinity", "-1e+300", "-10", "-9.5", "-0.001", "0", "1e-300", "0.5", "2", "10", "1e+20", "Infinity",
                "NaN",
            ], .float8)
        ascending(["-9223372036854775808", "-1", "0", "9", "10", "9223372036854775807"], .int8)
        ascending(
            [
                "0.100000000000000000000000000000000000001", "0.10000000000000000000000000000000000001",
                "12345678901234567890.5", "12345678901234567891",
            ], .numeric)
        equal("1.50", "1.5", .numeric)
        equal("-0", "0", .float8)
        equal("NaN", "NaN", .numeric)
        equal("100", "1e+2", .float8)
        #expect(SortValue("2", type: .int4) < SortValue("2.5", type: .float8), "an integer against a float")
        #expect(SortValue("3", type: .int2) > SortValue("2.999999999999999999999", type: .numeric))
    }

    @Test("text by its UTF-8 bytes; character(n) without its trailing spaces")
    func text() {
        ascending(["", "A", "B", "Z", "a", "ab", "b", "z", "é", "€", "😀"], .text)
        ascending(["a", "a\u{01}"], .bpchar)
        equal("ab  ", "ab", .bpchar)
        ascending(["ab", "ab "], .text, "trailing spaces count in text")
        ascending(
            [
                "00000000-0000-0000-0000-000000000000", "0a000000-0000-0000-0000-000000000000",
                "ff000000-0000-0000-0000-000000000000",
            ], .uuid)
    }

    @Test("booleans false before true; NULL after every value")
    func booleansAndNull() {
        ascending(["f", "t", nil], .bool)
        ascending(["-Infinity", "0", "NaN", nil], .numeric)
        ascending(["z", nil], .text)
        ascending(["infinity", nil], .timestamptz)
        #expect(SortValue(nil, type: .text) == .null && SortValue.null.isNull)
    }

    @Test("timestamps, dates and times by time")
    func times() {
        ascending(
            [
                "-infinity", "4713-11-24 00:00:00 BC", "0044-03-15 12:00:00 BC", "0001-12-31 23:59:59.999999 BC",
                "0001-01-01 00:00:00", "1999-12-31 23:59:59", "2000-01-01 00:00:00", "2000-01-01 00:00:00.000001",
                "2024-02-29 12:00:00", "2026-12-01 10:00:00", "10000-01-01 00:00:00", "294276-12-31 23:59:59.999999",
                "infinity",
            ], .timestamp)
        ascending(
            [
                "2026-12-01 08:00:00+00", "2026-12-01 10:30:00+02", "2026-12-01 09:30:00+00", "2026-12-01 05:00:00-05",
                "2026-12-01 10:00:00.5+00", "2026-12-01 10:31:00+00:30", "2026-12-02 01:00:00+14",
                "2026-12-01 23:00:00-05:30", "2026-12-02 04:30:10+00:00:05",
            ], .timestamptz)
        equal("2026-12-01 12:00:00+02", "2026-12-01 10:00:00+00", .timestamptz)
        equal("2026-12-01 00:30:00+01", "2026-11-30 23:30:00+00", .timestamptz)
        ascending(
            ["-infinity", "0001-01-01 BC", "0001-01-01", "1970-01-01", "2000-03-01", "2026-12-01", "infinity"], .date)
        ascending(["00:00:00", "00:00:00.000001", "09:59:59.9", "10:00:00", "23:59:59.999999", "24:00:00"], .time)
        ascending(["10:00:00+02", "09:00:01+00:00:01", "09:00:00+00", "10:00:00+00"], .timetz)
        ascending(["12:00:00+02", "10:00:00+00"], .timetz, "the same instant: west after east")
    }

    @Test("a descending term reverses, NULL first; the primary key breaks ties, part by part by its types")
    func keys() throws {
        let columns: [SourceRelation.Column] = [
            .init(name: "folder", type: .text), .init(name: "sent_at", type: .timestamptz),
            .init(name: "tenant", type: .int4), .init(name: "id", type: .text), .init(name: "list", type: .text),
        ]
        let source = try SourceConfiguration(
            entry: entry(["list": "l-{list}", "order": ["sent_at desc"], "data": []]), index: 0, environment: [:])
        let mapping = try RowMapping(
            source: source, relation: SourceRelation(columns: columns, primaryKey: ["tenant", "id"]))
        let rows: [[String?]] = [
            ["a", nil, "1", "b", "x"],
            ["a", "2026-12-02 00:00:00+00", "1", "b", "x"],
            ["a", "2026-12-01 00:00:00+00", "2", "a", "x"],
            ["a", "2026-12-01 00:00:00+00", "10", "a", "x"],
            ["a", "2026-12-01 00:00:00+00", "10", "b", "x"],
        ]
        let keys = rows.map(mapping.itemKey(of:))
        for (lower, higher) in zip(keys, keys.dropFirst()) {
            #expect(lower < higher && !(higher < lower))
        }
        #expect(keys.reversed().sorted() == keys)
        for index in 0...keys.count {
            var others = keys
            let removed = index < keys.count ? others.remove(at: index) : nil
            if let removed { #expect(SourceOrder.insertionIndex(of: removed, in: others) == index) }
        }
        #expect(SourceOrder.insertionIndex(of: keys[2], in: [keys[0], keys[1], keys[3]][...]) == 2)
        #expect(SourceOrder.insertionIndex(of: keys[0], in: [ItemOrderKey]()) == 0)
    }

    @Test("sections by their values, asc or desc, with the same rules")
    func sections() throws {
        let columns: [SourceRelation.Column] = [.init(name: "id", type: .int8), .init(name: "day", type: .date)]
        func keys(_ order: String) throws -> [SectionOrderKey] {
            let source = try SourceConfiguration(
                entry: entry([
                    "list": "days", "section": "day", "sectionOrder": .string(order), "order": [], "data": [],
                ]),
                index: 0, environment: [:])
            let mapping = try RowMapping(source: source, relation: SourceRelation(columns: columns, primaryKey: ["id"]))
            return [nil, "2026-01-02", "2026-01-10", "2025-12-31"].map { mapping.sectionKey(of: ["1", $0]) }
        }
        let ascending = try keys("asc")
        #expect(ascending.sorted() == [ascending[3], ascending[1], ascending[2], ascending[0]])
        let descending = try keys("desc")
        #expect(descending.sorted() == [descending[0], descending[2], descending[1], descending[3]])
        #expect(SourceOrder.insertionIndex(of: descending[1], in: [descending[0], descending[2], descending[3]]) == 2)
    }
}
