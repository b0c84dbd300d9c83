import NIOCore
import PostgresNIO
import QuireCore

extension PostgresListStore {
    /// The server side of a commit (``commit(list:previous:at:next:write:)``): one call locks the list, checks
    /// that it is at the version the write was built on, writes the rows that changed, logs the write and sets
    /// the list's row, and answers the log position, or `NULL` when the list is not at that version (nothing
    /// written; the locks stay taken until the caller's transaction ends).
    ///
    /// One statement instead of one per row and step: PostgreSQL parses and plans a client's statement every time
    /// it is sent (postgres-nio's unnamed statements), and each is a message through both ends' event loops; a
    /// PL/pgSQL function plans its statements once per connection and keeps them. Called outside a transaction,
    /// the call is the whole transaction, so a write that does not conflict costs one round trip (two when new rows
    /// go between kept siblings, whose positions are read first).
    ///
    /// The locks and checks are those a commit in a transaction of its own takes: an advisory lock on the name
    /// (that a list not yet created has no row to lock), then the list's row `FOR UPDATE`. A creation
    /// (`expected_version` `NULL`) goes on only while no list of that name exists and the name's retired version
    /// (`quire_retired`) is below the new one, and then forgets that version and any rows left under the name.
    /// Then, as the SQLite store does, old rows go first, so that new positions never meet a stale one.
    ///
    /// Arrays carry the rows, one element per row and one array per column; an empty `bytea` stands for a
    /// section's missing header or footer (a stored one is JSON, never empty), since postgres-nio encodes no
    /// `NULL` inside an array.
    ///
    /// Part of the schema, created when missing as the tables are (an existing database gets it at the first start
    /// of this release; instances of an earlier one go on without it, taking the same locks in the same order). A
    /// release that changes what it takes or what it does gives it a new name, so that instances of the release
    /// before, still running during an upgrade, keep theirs.
    static let commitFunction: PostgresQuery = """
        DO $do$ BEGIN
            IF to_regproc('quire_commit') IS NULL THEN
                CREATE FUNCTION quire_commit(
                    list_name text, expected_version bigint, expected_position bigint, new_version bigint,
                    change_kind text, change_body bytea, section_count bigint, item_count bigint,
                    removed_sections text[], removed_items text[],
                    placed_section_ids text[], placed_section_positions bytea[],
                    placed_section_headers bytea[], placed_section_footers bytea[],
                    updated_section_ids text[], updated_section_headers bytea[], updated_section_footers bytea[],
                    placed_item_nested smallint[], placed_item_parents text[], placed_item_positions bytea[],
                    placed_item_ids text[], placed_item_bodies bytea[],
                    updated_item_ids text[], updated_item_bodies bytea[]
                ) RETURNS bigint LANGUAGE plpgsql AS $$
                DECLARE
                    stored_version bigint;
                    stored_position bigint;
                    retired_version bigint;
                    logged_position bigint;
                BEGIN
                    PERFORM pg_advisory_xact_lock(hashtext(list_name));
                    SELECT l.version, l.position INTO stored_version, stored_position
                    FROM quire_list l WHERE l.name = list_name FOR UPDATE;
                    IF expected_version IS NULL THEN
                        IF FOUND THEN RETURN NULL; END IF;
                        SELECT r.version INTO retired_version FROM quire_retired r WHERE r.name = list_name;
                        IF FOUND THEN
                            IF retired_version >= new_version THEN RETURN NULL; END IF;
                            DELETE FROM quire_retired r WHERE r.name = list_name;
                        END IF;
                        DELETE FROM quire_item i WHERE i.list = list_name;
                        DELETE FROM quire_section s WHERE s.list = list_name;
                    ELSIF NOT FOUND OR stored_version <> expected_version OR stored_position <> expected_position THEN
                        RETURN NULL;
                    END IF;

                    IF cardinality(removed_sections) > 0 THEN
                        DELETE FROM quire_section s WHERE s.list = list_name AND s.id = ANY (removed_sections);
                    END IF;
                    IF cardinality(removed_items) > 0 THEN
                        DELETE FROM quire_item i WHERE i.list = list_name AND i.id = ANY (removed_items);
                    END IF;
                    IF cardinality(placed_section_ids) > 0 THEN
                        INSERT INTO quire_section (list, id, position, header, footer)
                        SELECT list_name, u.id, u.position, nullif(u.header, ''::bytea), nullif(u.footer, ''::bytea)
                        FROM unnest(placed_section_ids, placed_section_positions, placed_section_headers,
                            placed_section_footers) AS u (id, position, header, footer)
                        ON CONFLICT (list, id) DO UPDATE
                        SET position = excluded.position, header = excluded.header, footer = excluded.footer;
                    END IF;
                    IF cardinality(updated_section_ids) > 0 THEN
                        UPDATE quire_section s
                        SET header = nullif(u.header, ''::bytea), footer = nullif(u.footer, ''::bytea)
                        FROM unnest(updated_section_ids, updated_section_headers, updated_section_footers)
                            AS u (id, header, footer)
                        WHERE s.list = list_name AND s.id = u.id;
                    END IF;
                    IF cardinality(placed_item_ids) > 0 THEN
                        INSERT INTO quire_item (list, nested, parent, position, id, body)
                        SELECT list_name, u.nested, u.parent, u.position, u.id, u.body
                        FROM unnest(placed_item_nested, placed_item_parents, placed_item_positions, placed_item_ids,
                            placed_item_bodies) AS u (nested, parent, position, id, body);
                    END IF;
                    IF cardinality(updated_item_ids) > 0 THEN
                        UPDATE quire_item i SET body = u.body
                        FROM unnest(updated_item_ids, updated_item_bodies) AS u (id, body)
                        WHERE i.list = list_name AND i.id = u.id;
                    END IF;

                    INSERT INTO quire_log (position, list, version, kind, body, committed_at)
                    VALUES (nextval('quire_log_position'), list_name, new_version, change_kind, change_body,
                        extract(epoch from clock_timestamp()))
                    RETURNING position INTO logged_position;
                    IF expected_version IS NULL THEN
                        INSERT INTO quire_list (name, version, position, sections, items, sized_version)
                        VALUES (list_name, new_version, logged_position, section_count, item_count, new_version);
                    ELSE
                        UPDATE quire_list l
                        SET version = new_version, position = logged_position, sections = section_count,
                            items = item_count, sized_version = new_version
                        WHERE l.name = list_name;
                    END IF;
                    RETURN logged_position;
                END $$;
            END IF;
        END $do$
        """
}

/// One commit, as ``PostgresListStore/commitFunction`` takes it.
struct CommitRequest {
    let list: String
    /// The version the write was built on and its log position; `nil` for a creation.
    let expected: (version: UInt64, position: Int64)?
    let version: UInt64
    /// The write, as logged.
    let kind: String
    let body: [UInt8]
    /// The list's sizes at `version`.
    let sizes: (sections: Int, items: Int)
    let changes: StorageChanges

    /// The positions of the placed rows: one array per run of ``StorageChanges/placedSections``, then of
    /// ``StorageChanges/placedItems``, one key per row of the run.
    struct Positions {
        let sections: [[[UInt8]]]
        let items: [[[UInt8]]]
    }

    /// The call of the function that stores this commit, with the rows placed at `positions`.
    func call(placing positions: Positions) -> CommitCall {
        // An empty header or footer stands for none (see the function).
        func optional(_ bytes: [UInt8]?) -> ByteBuffer { ByteBuffer(bytes: bytes ?? []) }
        var placedSections = (
            ids: [String](), positions: [ByteBuffer](), headers: [ByteBuffer](), footers: [ByteBuffer]()
        )
        for (run, keys) in zip(changes.placedSections, positions.sections) {
            for (section, key) in zip(run.sections, keys) {
                placedSections.ids.append(section.id)
                placedSections.positions.append(ByteBuffer(bytes: key))
                placedSections.headers.append(optional(section.header))
                placedSections.footers.append(optional(section.footer))
            }
        }
        var placedItems = (
            nested: [Int16](), parents: [String](), positions: [ByteBuffer](), ids: [String](), bodies: [ByteBuffer]()
        )
        for (run, keys) in zip(changes.placedItems, positions.items) {
            let (nested, parent): (Int16, String) =
                switch run.container {
                case .section(let section): (0, section)
                case .item(let item): (1, item)
                }
            for (item, key) in zip(run.items, keys) {
                placedItems.nested.append(nested)
                placedItems.parents.append(parent)
                placedItems.positions.append(ByteBuffer(bytes: key))
                placedItems.ids.append(item.id)
                placedItems.bodies.append(ByteBuffer(bytes: item.body))
            }
        }
        var bindings = PostgresBindings(capacity: 24)
        bindings.append(list)
        bindings.append(expected.map { Int64(bitPattern: $0.version) })
        bindings.append(expected?.position)
        bindings.append(Int64(bitPattern: version))
        bindings.append(kind)
        bindings.append(ByteBuffer(bytes: body))
        bindings.append(Int64(sizes.sections))
        bindings.append(Int64(sizes.items))
        bindings.append(changes.removedSections)
        bindings.append(changes.removedItems + changes.movedItems)
        bindings.append(placedSections.ids)
        bindings.append(placedSections.positions)
        bindings.append(placedSections.headers)
        bindings.append(placedSections.footers)
        bindings.append(changes.updatedSections.map(\.id))
        bindings.append(changes.updatedSections.map { optional($0.header) })
        bindings.append(changes.updatedSections.map { optional($0.footer) })
        bindings.append(placedItems.nested)
        bindings.append(placedItems.parents)
        bindings.append(placedItems.positions)
        bindings.append(placedItems.ids)
        bindings.append(placedItems.bodies)
        bindings.append(changes.updatedItems.map(\.id))
        bindings.append(changes.updatedItems.map { ByteBuffer(bytes: $0.body) })
        return CommitCall(bindings: bindings)
    }
}
