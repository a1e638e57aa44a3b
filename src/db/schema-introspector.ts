import { PostgresDialect, sql, type DatabaseIntrospector, type DatabaseMetadataOptions, type Kysely, type TableMetadata } from 'kysely';

const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/**
 * Kysely's PostgreSQL introspector reads the catalogue of every schema on the server and
 * resolves each table by name afterwards, so a table renamed or dropped meanwhile in any other
 * schema (another installation, a test) fails the read, and the migrator with it. This one
 * reads the connection's own schema only, in one query.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas() {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      schema: string;
      table: string;
      is_view: boolean;
      column: string;
      type: string;
      type_schema: string;
      nullable: boolean;
      has_default: boolean;
      serial: boolean;
    }>`
      select t.table_schema as schema, t.table_name as table, t.table_type = 'VIEW' as is_view,
             c.column_name as column, c.udt_name as type, c.udt_schema as type_schema,
             c.is_nullable = 'YES' as nullable, c.column_default is not null as has_default,
             (c.is_identity = 'YES' or coalesce(c.column_default like 'nextval(%', false)) as serial
        from information_schema.tables t
        join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
       where t.table_schema = current_schema()
       order by t.table_name, c.ordinal_position`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && MIGRATION_TABLES.includes(row.table)) continue;
      let table = tables.get(row.table);
      if (!table) tables.set(row.table, (table = { name: row.table, schema: row.schema, isView: row.is_view, columns: [] }));
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: row.nullable,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.serial,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions) {
    return { tables: await this.getTables(options) };
  }
}

/** The PostgreSQL dialect, introspecting only the connection's schema (CurrentSchemaIntrospector). */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
