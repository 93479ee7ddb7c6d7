"""SQLite (the quick start) enforces double entry too: a transfer whose postings do not sum to
zero cannot commit, and postings cannot be changed. PostgreSQL's guard (0002) is left as it is.

SQLite has no deferred triggers, and its row triggers fire after each row, even of a multi-row
INSERT: a trigger refusing an unbalanced sum at once would refuse the first leg of every
transfer. What SQLite does defer to commit is a foreign key declared DEFERRABLE INITIALLY
DEFERRED (Django turns foreign keys on for every connection). So the triggers keep one row in
``wallet_unbalanced_transfer`` for each transfer whose postings do not sum to zero (in cents,
SQLite adding decimals as floats), and that row's foreign key points into a table kept empty:
while any transfer is unbalanced, COMMIT fails with "FOREIGN KEY constraint failed". A transfer
may be built leg by leg in its transaction, as on PostgreSQL.

Unlike PostgreSQL, a posting may be deleted: Django's ``flush`` empties tables with DELETE on
SQLite (TRUNCATE on PostgreSQL, which fires no row trigger). A deletion is checked as an insert
is: only a whole transfer's postings can go, or the commit fails."""

from typing import Any

from django.db import migrations

CREATE = [
    # No row is ever written here: an unbalanced transfer has nothing to point at.
    "CREATE TABLE wallet_unbalanced_transfer_allowed (transfer_id char(32) NOT NULL PRIMARY KEY)",
    """CREATE TABLE wallet_unbalanced_transfer (
        transfer_id char(32) NOT NULL PRIMARY KEY
            REFERENCES wallet_unbalanced_transfer_allowed (transfer_id)
            DEFERRABLE INITIALLY DEFERRED
    )""",
    *(
        f"""CREATE TRIGGER wallet_posting_{event.lower()}_balanced AFTER {event} ON wallet_posting
        BEGIN
            DELETE FROM wallet_unbalanced_transfer WHERE transfer_id = {row}.transfer_id;
            INSERT INTO wallet_unbalanced_transfer (transfer_id)
                SELECT {row}.transfer_id WHERE (
                    SELECT SUM(CAST(ROUND(amount * 100) AS INTEGER)) FROM wallet_posting
                    WHERE transfer_id = {row}.transfer_id
                ) <> 0;
        END"""
        for event, row in (("INSERT", "NEW"), ("DELETE", "OLD"))
    ),
    """CREATE TRIGGER wallet_posting_no_change BEFORE UPDATE ON wallet_posting
    BEGIN
        SELECT RAISE(ABORT, 'postings are immutable');
    END""",
]

DROP = [
    "DROP TRIGGER IF EXISTS wallet_posting_no_change",
    "DROP TRIGGER IF EXISTS wallet_posting_delete_balanced",
    "DROP TRIGGER IF EXISTS wallet_posting_insert_balanced",
    "DROP TABLE IF EXISTS wallet_unbalanced_transfer",
    "DROP TABLE IF EXISTS wallet_unbalanced_transfer_allowed",
]


def on_sqlite(statements: list[str]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("wallet", "0003_alter_account_kind")]

    operations = [migrations.RunPython(on_sqlite(CREATE), on_sqlite(DROP))]
