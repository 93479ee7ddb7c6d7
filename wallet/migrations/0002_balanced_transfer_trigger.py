"""PostgreSQL enforces double entry itself: a deferred constraint trigger refuses to commit a
transfer whose postings do not sum to zero, and postings can never be changed or deleted."""

from django.db import migrations

from core.db import on_postgresql

CREATE = """
CREATE OR REPLACE FUNCTION wallet_transfer_must_balance() RETURNS trigger AS $$
DECLARE total numeric;
BEGIN
    SELECT COALESCE(SUM(amount), 0) INTO total FROM wallet_posting
        WHERE transfer_id = NEW.transfer_id;
    IF total <> 0 THEN
        RAISE EXCEPTION 'transfer % does not balance: its postings sum to %',
            NEW.transfer_id, total USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER wallet_posting_balanced
    AFTER INSERT ON wallet_posting DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION wallet_transfer_must_balance();

CREATE OR REPLACE FUNCTION wallet_posting_immutable() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'postings are immutable' USING ERRCODE = 'restrict_violation';
END $$ LANGUAGE plpgsql;

CREATE TRIGGER wallet_posting_no_change
    BEFORE UPDATE OR DELETE ON wallet_posting
    FOR EACH ROW EXECUTE FUNCTION wallet_posting_immutable();
"""

DROP = """
DROP TRIGGER IF EXISTS wallet_posting_no_change ON wallet_posting;
DROP FUNCTION IF EXISTS wallet_posting_immutable();
DROP TRIGGER IF EXISTS wallet_posting_balanced ON wallet_posting;
DROP FUNCTION IF EXISTS wallet_transfer_must_balance();
"""



class Migration(migrations.Migration):
    dependencies = [("wallet", "0001_initial")]

    operations = [migrations.RunPython(on_postgresql(CREATE), on_postgresql(DROP))]
