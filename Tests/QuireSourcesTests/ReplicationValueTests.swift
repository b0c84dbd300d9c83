import QuireSources
import Testing

@Suite("LSN, the PostgreSQL clock, and the stream's frames")
struct ReplicationValueTests {
    @Test(
        "LSN reads and prints PostgreSQL's X/Y form",
        arguments: [
            ("0/0", 0), ("0/16B3748", 0x16B_3748), ("16/B374D848", 0x16_B374_D848),
            ("FFFFFFFF/FFFFFFFF", UInt64.max), ("1/0", 1 << 32),
        ] as [(String, UInt64)])
    func lsn(text: String, value: UInt64) throws {
        let lsn = try #require(LSN(text))
        #expect(lsn.rawValue == value)
        #expect(lsn.description == text)
    }

    @Test("LSN takes lower case and leading zeros, as pg_lsn does, and refuses anything else")
    func lsnInput() {
        #expect(LSN("16/b374d848") == LSN(0x16_B374_D848))
        #expect(LSN("00000000/0000000A")?.description == "0/A")
        for bad in [
            "", "/", "0/", "/0", "0", "0/0/0", "123456789/0", "0/123456789", "0x1/0", "g/0", " 0/0", "0/0 ", "-1/0",
        ] {
            #expect(LSN(bad) == nil, "\(bad)")
        }
    }

    @Test("LSN order and distances")
    func lsnDistance() {
        let (a, b) = (LSN("0/1000")!, LSN("1/0")!)
        #expect(a < b)
        #expect(a.distance(to: b) == 0x1_0000_0000 - 0x1000)
        #expect(b.distance(to: a) == -(0x1_0000_0000 - 0x1000))
        #expect(LSN.invalid.distance(to: LSN(UInt64.max)) == Int64.max)
    }

    @Test("the clock counts microseconds from PostgreSQL's epoch, and prints as PostgreSQL does in UTC")
    func clock() {
        #expect(PostgresTimestamp(rawValue: 0).secondsSinceUnixEpoch == 946_684_800)
        #expect(PostgresTimestamp(rawValue: 0).description == "2000-01-01 00:00:00+00")
        #expect(PostgresTimestamp(microsecondsSinceUnixEpoch: 0).rawValue == -946_684_800_000_000)
        #expect(PostgresTimestamp(microsecondsSinceUnixEpoch: 0).description == "1970-01-01 00:00:00+00")
        let instant = PostgresTimestamp(secondsSinceUnixEpoch: 1_796_119_200.25)
        #expect(instant.description == "2026-12-01 10:00:00.25+00")
        #expect(instant.microsecondsSinceUnixEpoch == 1_796_119_200_250_000)
        #expect(PostgresTimestamp(rawValue: -1).description == "1999-12-31 23:59:59.999999+00")
        #expect(PostgresTimestamp(rawValue: 60 * 86_400_000_000).description == "2000-03-01 00:00:00+00")
        // Extremes saturate instead of trapping.
        #expect(PostgresTimestamp(rawValue: .max).microsecondsSinceUnixEpoch == .max)
        #expect(PostgresTimestamp(microsecondsSinceUnixEpoch: .min).rawValue == .min)
        #expect(PostgresTimestamp(secondsSinceUnixEpoch: .infinity).rawValue == .max)
        #expect(PostgresTimestamp(secondsSinceUnixEpoch: -1e300).rawValue == .min)
        _ = PostgresTimestamp(rawValue: .min).description
        let now = PostgresTimestamp.now()
        #expect(now > PostgresTimestamp(secondsSinceUnixEpoch: 1_700_000_000))
    }

    @Test("XLogData: start, end, server clock, then the message")
    func xLogData() throws {
        let payload = try #require(CapturedPgOutput.message("insert", 0)).bytes
        let bytes =
            Array("w".utf8) + [0, 0, 0, 0, 1, 0xD5, 0x37, 0x70] + [0, 0, 0, 0, 1, 0xD5, 0x40, 0] + [
                0, 0, 0, 0, 0, 0, 0, 5,
            ]
            + payload
        guard case .xLogData(let data) = try ReplicationMessage(decoding: bytes) else {
            Issue.record("not XLogData")
            return
        }
        #expect(data.start == LSN("0/1D53770"))
        #expect(data.end == LSN("0/1D54000"))
        #expect(data.serverClock == PostgresTimestamp(rawValue: 5))
        #expect(data.payload == payload)
        #expect(ReplicationMessage.xLogData(data).encoded == bytes)
        let error = #expect(throws: ReplicationDecodingError.self) {
            try ReplicationMessage(decoding: Array(bytes[..<20]))
        }
        #expect(error?.messageName == "XLogData")
    }

    @Test("a primary keepalive: end, server clock, reply requested; nothing after it")
    func keepalive() throws {
        let bytes = Array("k".utf8) + [0, 0, 0, 0x16, 0xB3, 0x74, 0xD8, 0x48] + [0, 0, 0, 0, 0, 0, 0x10, 0] + [1]
        #expect(
            try ReplicationMessage(decoding: bytes)
                == .keepalive(
                    PrimaryKeepalive(
                        end: LSN("16/B374D848")!, serverClock: PostgresTimestamp(rawValue: 4096), replyRequested: true))
        )
        #expect(throws: ReplicationDecodingError.self) { try ReplicationMessage(decoding: bytes + [0]) }
        #expect(throws: ReplicationDecodingError.self) { try ReplicationMessage(decoding: bytes.dropLast() + [2]) }
        for length in 0..<bytes.count {
            #expect(throws: ReplicationDecodingError.self) { try ReplicationMessage(decoding: Array(bytes[..<length])) }
        }
        let unknown = #expect(throws: ReplicationDecodingError.self) { try ReplicationMessage(decoding: [0x72]) }
        #expect(unknown?.reason == "an unknown kind 114")
    }

    @Test("a standby status update: r, written, flushed, applied, clock, reply flag")
    func statusUpdate() {
        let status = StandbyStatusUpdate(
            flushed: LSN("1/2")!, applied: LSN("0/1")!, clock: PostgresTimestamp(rawValue: 3), replyRequested: true)
        #expect(status.written == LSN("1/2"))
        #expect(
            status.encoded
                == Array("r".utf8) + [0, 0, 0, 1, 0, 0, 0, 2] + [0, 0, 0, 1, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 1]
                + [0, 0, 0, 0, 0, 0, 0, 3] + [1])
    }
}

@Suite("connection URLs without their passwords")
struct ConnectionURLTests {
    @Test(
        "the password is replaced by *** wherever the URL holds it",
        arguments: [
            ("postgres://quire:secret@db:5432/app", "postgres://quire:***@db:5432/app", "secret"),
            ("postgresql://quire:s%40cr%2Fet@db/app", "postgresql://quire:***@db/app", "s@cr/et"),
            // Unescaped @ and / in a password: the user part ends at the last @ before the options.
            ("postgres://quire:p@ss/w@rd@db/app", "postgres://quire:***@db/app", "p@ss/w@rd"),
            (
                "postgres://quire@db/app?password=secret&sslmode=disable",
                "postgres://quire@db/app?password=***&sslmode=disable", "secret"
            ),
            ("postgres://db/app", "postgres://db/app", ""),
            ("host=db user=quire password=secret dbname=app", "host=db user=quire password=*** dbname=app", "secret"),
            ("host=db password = 'se cr\\'et' dbname=app", "host=db password = *** dbname=app", "se cr\\'et"),
            ("passwordless=1 host=db", "passwordless=1 host=db", ""),
        ] as [(String, String, String)])
    func redacted(url: String, redacted: String, password: String) {
        let connectionURL = ConnectionURL(url)
        #expect(connectionURL.redacted == redacted)
        if !password.isEmpty {
            #expect(connectionURL.redact("libpq said: \(password)!") == "libpq said: ***!")
            #expect(!connectionURL.redacted.contains(password))
        }
    }

    @Test("pieces of a malformed URL's password are removed too, and percent-decoded forms")
    func pieces() {
        let url = ConnectionURL("postgres://quire:hunter/two@db/app")
        #expect(url.redact(#"invalid port "hunter""#) == #"invalid port "***""#)
        #expect(url.redact("two@db") == "***@db")
        let encoded = ConnectionURL("postgres://quire:se%63ret@db/app")
        #expect(encoded.redact("secret and se%63ret") == "*** and ***")
    }
}
