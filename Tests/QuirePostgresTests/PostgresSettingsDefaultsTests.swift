// Built with the PostgreSQL trait only (the default): without it there is no QuirePostgres to test.
#if PostgreSQL
    import QuirePostgres
    import Testing

    @testable import quire

    /// `quire` knows the shared store's keys in every build (a server built without the PostgreSQL trait still reads
    /// config/quire.yaml), so their defaults are written in Settings too: they must stay those of PostgresSettings.
    @Suite("The shared store's defaults")
    struct PostgresSettingsDefaultsTests {
        @Test("storage.poolSize, storage.statementTimeout and storage.logRetention default to PostgresSettings' values")
        func defaultsAgree() throws {
            let postgres = try PostgresSettings(url: "postgres://localhost")
            #expect(Settings.StorageDefaults.poolSize == postgres.poolSize)
            #expect(Settings.StorageDefaults.statementTimeoutSeconds == postgres.statementTimeoutSeconds)
            #expect(Settings.StorageDefaults.logRetention == postgres.logRetention)
        }

        @Test("storage.kind: postgres reads the URL and the pool's keys")
        func postgresFromEnvironment() async throws {
            let settings = try await Settings.load(
                configFile: nil,
                environment: [
                    "QUIRE_STORAGE_KIND": "postgres", "QUIRE_STORAGE_URL": "postgres://quire@127.0.0.1:5433/lists",
                    "QUIRE_STORAGE_POOL_SIZE": "9",
                ],
                flags: [:])
            let postgres = try #require(settings.postgres)
            #expect(postgres.host == "127.0.0.1" && postgres.port == 5433 && postgres.database == "lists")
            #expect(postgres.poolSize == 9)
            #expect(postgres.logRetention == Settings.StorageDefaults.logRetention)
        }
    }
#endif
