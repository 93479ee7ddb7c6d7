"""Indexes added and dropped on a live database: on PostgreSQL ``CREATE INDEX CONCURRENTLY``
(and ``DROP INDEX CONCURRENTLY``), which let the table take writes meanwhile, where a plain
``CREATE INDEX`` would hold every write to, say, the ten million trades until it is built. Such a
migration must be ``atomic = False`` (PostgreSQL refuses ``CONCURRENTLY`` in a transaction).
Elsewhere (the quick start's SQLite) the plain statements."""

from typing import Any

from django.db import migrations


def _concurrently(schema_editor: Any) -> dict[str, bool]:
    if schema_editor.connection.vendor != "postgresql":
        return {}
    # An operation's own ``atomic`` is not read for schema operations: the migration's is.
    assert not schema_editor.connection.in_atomic_block, "the migration must set atomic = False"
    return {"concurrently": True}


class AddIndexOnline(migrations.AddIndex):
    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, **_concurrently(schema_editor))

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, **_concurrently(schema_editor))


class RemoveIndexOnline(migrations.RemoveIndex):
    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            index = from_state.models[app_label, self.model_name_lower].get_index_by_name(self.name)
            schema_editor.remove_index(model, index, **_concurrently(schema_editor))

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            index = to_state.models[app_label, self.model_name_lower].get_index_by_name(self.name)
            schema_editor.add_index(model, index, **_concurrently(schema_editor))
