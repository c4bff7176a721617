/**
 * Whether a statement could be routed to one shard of a PostgreSQL distributed by
 * account (Citus, docs/scaling.md), read from the statement's parse tree (the real
 * PostgreSQL parser, libpg-query).
 *
 * The rule is Citus's for router queries, taken conservatively: every reference to a
 * distributed table, in every query level (the statement, each CTE, each subquery,
 * EXISTS and lateral subquery alike), is pinned to one value of its distribution column
 * by equalities of that same level: `x.account_id = <parameter or constant>`, or
 * `x.account_id = y.account_id` with `y` pinned (PostgreSQL derives the constant for `x`
 * from that, and Citus prunes with what PostgreSQL derives). An equality with a column
 * of an outer level does not pin: Citus does not route a correlated subquery by its
 * outer query's filter (citusdata/citus#4644, #2846), it needs its own. A row an INSERT
 * writes is pinned when its distribution column is a parameter or constant, or a pinned
 * column of the SELECT that feeds it. Every pin of the statement must then name one and
 * the same value (parameters are read with the values they were bound to).
 *
 * Utility statements (ANALYZE, DDL, …) that name a distributed table are never routed.
 */
import { loadModule, parseSync } from 'libpg-query';

/** How tables are laid out across shards. */
export interface ShardLayout {
  /** Distributed tables and their distribution column, co-located with each other. */
  distributed: Readonly<Record<string, string>>;
  /** Maps a table name that is part of a distributed table (a partition leaf) to that table; null when it is not. */
  partitionOf?: (name: string) => string | null;
}

/** What routing one statement would come to. */
export interface RoutingVerdict {
  /** Distributed tables the statement names (partition leaves as their table). */
  tables: string[];
  /** `none`: it names no distributed table; `single`: every reference is pinned to `value`; `multi`: see `problems`. */
  kind: 'none' | 'single' | 'multi';
  value?: string;
  problems: string[];
}

export type ParamValue = string | Buffer | null;

/** Loads the parser (a WebAssembly module) once, before the first routeStatement. */
export async function loadSqlParser(): Promise<void> {
  await loadModule();
}

type Node = Record<string, any>;

/** One FROM item of a query level that can be pinned: a table (or a CTE or function, which cannot). */
interface RangeItem {
  alias: string;
  /** The distributed table it reads, or null (a CTE, a function, a table that is not distributed). */
  table: string | null;
}

/** Union–find over `alias.column` and `=value` keys. */
class Equalities {
  readonly #parent = new Map<string, string>();

  find(key: string): string {
    let root = key;
    while (this.#parent.has(root) && this.#parent.get(root) !== root) root = this.#parent.get(root)!;
    this.#parent.set(key, root);
    return root;
  }

  join(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.#parent.set(ra, rb);
  }

  /** The values in `key`'s class. */
  valuesOf(key: string): string[] {
    const root = this.find(key);
    const values = new Set<string>();
    for (const member of this.#parent.keys()) if (member.startsWith('=') && this.find(member) === root) values.add(member.slice(1));
    return [...values];
  }
}

/** A query level's names, for resolving column references and pins. */
interface Level {
  description: string;
  items: RangeItem[];
  equalities: Equalities;
}

class StatementRouter {
  readonly #layout: ShardLayout;
  readonly #params: readonly ParamValue[];
  readonly tables = new Set<string>();
  readonly values = new Set<string>();
  readonly problems: string[] = [];

  constructor(layout: ShardLayout, params: readonly ParamValue[]) {
    this.#layout = layout;
    this.#params = params;
  }

  /** The distributed table a relation name stands for, or null. */
  distributedTable(name: string): string | null {
    if (name in this.#layout.distributed) return name;
    return this.#layout.partitionOf?.(name) ?? null;
  }

  statement(stmt: Node): void {
    const [kind, body] = Object.entries(stmt)[0]!;
    if (kind === 'SelectStmt' || kind === 'InsertStmt' || kind === 'UpdateStmt' || kind === 'DeleteStmt') {
      this.query(stmt, new Set(), 'the statement');
      return;
    }
    // A utility statement: whatever distributed table it names, it is not routed.
    const named = new Set<string>();
    walk(body, (node) => {
      // A RangeVar's fields, wherever it sits (VACUUM/ANALYZE hold them bare).
      const table = typeof node.relname === 'string' ? this.distributedTable(node.relname) : null;
      if (table) named.add(table);
      return true;
    });
    for (const table of named) {
      this.tables.add(table);
      this.problems.push(`${kind} on ${table} is not a routed query`);
    }
  }

  /** One query (a statement, CTE or subquery) and every level inside it. */
  query(wrapper: Node, outerCtes: ReadonlySet<string>, description: string): void {
    const [kind, node] = Object.entries(wrapper)[0]! as [string, Node];
    const ctes = new Set(outerCtes);
    for (const cte of node.withClause?.ctes ?? []) ctes.add(cte.CommonTableExpr.ctename);
    for (const cte of node.withClause?.ctes ?? []) this.query(cte.CommonTableExpr.ctequery, ctes, `CTE ${cte.CommonTableExpr.ctename}`);
    if (kind === 'SelectStmt' && node.op && node.op !== 'SETOP_NONE') {
      this.query({ SelectStmt: node.larg }, ctes, description);
      this.query({ SelectStmt: node.rarg }, ctes, description);
      return;
    }
    const level: Level = { description, items: [], equalities: new Equalities() };
    const conjuncts: Node[] = [];
    const nested: Node[] = [];
    if (kind === 'SelectStmt') {
      for (const item of node.fromClause ?? []) this.fromItem(item, level, ctes, conjuncts, nested);
      conjuncts.push(...andOf(node.whereClause));
      nested.push(node.targetList, node.whereClause, node.havingClause, node.valuesLists, node.sortClause, node.groupClause);
    } else if (kind === 'UpdateStmt' || kind === 'DeleteStmt') {
      this.fromItem({ RangeVar: node.relation }, level, ctes, conjuncts, nested);
      for (const item of node.fromClause ?? node.usingClause ?? []) this.fromItem(item, level, ctes, conjuncts, nested);
      conjuncts.push(...andOf(node.whereClause));
      nested.push(node.targetList, node.whereClause, node.returningClause);
    } else if (kind === 'InsertStmt') {
      this.insert(node, ctes, description);
      return;
    }
    for (const conjunct of conjuncts) this.equality(conjunct, level);
    for (const expression of nested) this.subqueriesIn(expression, ctes, description);
    this.checkPinned(level);
  }

  /** An INSERT: its rows are pinned by the distribution column's value in each (see above). */
  insert(node: Node, ctes: ReadonlySet<string>, description: string): void {
    const table = this.distributedTable(node.relation.relname);
    if (node.onConflictClause) this.subqueriesIn(node.onConflictClause, ctes, description);
    this.subqueriesIn(node.returningClause, ctes, description);
    if (!node.selectStmt) {
      if (table) this.unpinned(table, node.relation.alias?.aliasname ?? node.relation.relname, description, 'no rows given');
      return;
    }
    const columns: string[] = (node.cols ?? []).map((col: Node) => col.ResTarget.name);
    const select: Node = node.selectStmt.SelectStmt;
    if (!table) {
      this.query(node.selectStmt, ctes, description);
      return;
    }
    this.tables.add(table);
    const column = this.#layout.distributed[table]!;
    const position = columns.indexOf(column);
    const where = `${description}: insert into ${table}`;
    if (position < 0) {
      this.problems.push(`${where} does not name ${column} (its value comes from the select's columns, unchecked)`);
      this.query(node.selectStmt, ctes, description);
      return;
    }
    if (select.valuesLists) {
      for (const row of select.valuesLists) {
        const value = this.valueOf(row.List.items[position]);
        if (value === null) this.problems.push(`${where}: a VALUES row's ${column} is not a parameter or constant`);
        else this.values.add(value);
      }
      this.subqueriesIn(select.valuesLists, ctes, description);
      return;
    }
    // INSERT … SELECT: the pin of the select's column at that position, resolved in the select's own level.
    const inner = new StatementRouter(this.#layout, this.#params);
    const target = select.targetList?.[position]?.ResTarget?.val;
    let pinned: string | null = target ? this.valueOf(target) : null;
    if (pinned === null && target?.ColumnRef && (!select.op || select.op === 'SETOP_NONE')) {
      const level = inner.levelOf(select, ctes, description);
      const key = columnKey(target.ColumnRef, level);
      const values = key ? level.equalities.valuesOf(key) : [];
      if (values.length === 1) pinned = values[0]!;
    }
    if (pinned === null) this.problems.push(`${where}: the rows' ${column} is not pinned to one value`);
    else this.values.add(pinned);
    this.query(node.selectStmt, ctes, description);
  }

  /** A level's FROM items and equalities, without checking (for an INSERT's source). */
  levelOf(select: Node, ctes: ReadonlySet<string>, description: string): Level {
    const level: Level = { description, items: [], equalities: new Equalities() };
    const conjuncts: Node[] = [];
    for (const item of select.fromClause ?? []) this.fromItem(item, level, ctes, conjuncts, []);
    conjuncts.push(...andOf(select.whereClause));
    for (const conjunct of conjuncts) this.equality(conjunct, level);
    return level;
  }

  fromItem(item: Node, level: Level, ctes: ReadonlySet<string>, conjuncts: Node[], nested: Node[]): void {
    if (item.RangeVar) {
      const name: string = item.RangeVar.relname;
      const alias: string = item.RangeVar.alias?.aliasname ?? name;
      const table = !item.RangeVar.schemaname && ctes.has(name) ? null : this.distributedTable(name);
      level.items.push({ alias, table });
    } else if (item.JoinExpr) {
      const join = item.JoinExpr;
      const before = level.items.length;
      this.fromItem(join.larg, level, ctes, conjuncts, nested);
      const middle = level.items.length;
      this.fromItem(join.rarg, level, ctes, conjuncts, nested);
      if (join.jointype !== 'JOIN_FULL') conjuncts.push(...andOf(join.quals));
      nested.push(join.quals);
      // USING (the distribution column) joins it on both sides.
      for (const using of join.usingClause ?? []) {
        const column: string = using.String.sval;
        for (const left of level.items.slice(before, middle)) {
          for (const right of level.items.slice(middle)) {
            if (left.table && right.table && this.#layout.distributed[left.table] === column && this.#layout.distributed[right.table] === column) {
              level.equalities.join(`${left.alias}.${column}`, `${right.alias}.${column}`);
            }
          }
        }
      }
    } else if (item.RangeSubselect) {
      level.items.push({ alias: item.RangeSubselect.alias?.aliasname ?? '', table: null });
      this.query(item.RangeSubselect.subquery, ctes, `${item.RangeSubselect.lateral ? 'lateral ' : ''}subquery ${item.RangeSubselect.alias?.aliasname ?? ''} in ${level.description}`.trim());
    } else if (item.RangeFunction) {
      level.items.push({ alias: item.RangeFunction.alias?.aliasname ?? '', table: null });
      nested.push(item.RangeFunction.functions);
    }
  }

  /** Records `a = b` (or `a IN (one value)`) between columns of this level and values. */
  equality(conjunct: Node, level: Level): void {
    const expr = conjunct.A_Expr;
    if (!expr) return;
    const operator = expr.name?.[0]?.String?.sval;
    let right: Node | undefined = expr.rexpr;
    if (expr.kind === 'AEXPR_IN' && operator === '=' && right?.List?.items?.length === 1) right = right.List.items[0];
    else if (expr.kind !== 'AEXPR_OP' || operator !== '=') return;
    const sides = [expr.lexpr, right].map((side) => {
      const bare = stripCasts(side);
      if (bare?.ColumnRef) return columnKey(bare.ColumnRef, level);
      const value = this.valueOf(bare);
      return value === null ? null : `=${value}`;
    });
    if (sides[0] && sides[1]) level.equalities.join(sides[0], sides[1]);
  }

  /** A bound parameter's or a constant's value; null for anything else (NULL included: it routes nowhere). */
  valueOf(expression: Node | undefined): string | null {
    const bare = stripCasts(expression);
    if (bare?.ParamRef) {
      const value = this.#params[bare.ParamRef.number - 1];
      if (value === undefined) return `$${bare.ParamRef.number}`;
      if (value === null) return null;
      return typeof value === 'string' ? value : value.toString('hex');
    }
    const constant = bare?.A_Const;
    if (!constant || constant.isnull) return null;
    const value = constant.sval?.sval ?? constant.ival?.ival ?? constant.fval?.fval;
    return value === undefined ? (constant.ival ? '0' : null) : String(value);
  }

  checkPinned(level: Level): void {
    for (const item of level.items) {
      if (!item.table) continue;
      this.tables.add(item.table);
      const values = level.equalities.valuesOf(`${item.alias}.${this.#layout.distributed[item.table]}`);
      if (values.length === 1) this.values.add(values[0]!);
      else this.unpinned(item.table, item.alias, level.description, values.length === 0 ? undefined : `several values: ${values.join(', ')}`);
    }
  }

  unpinned(table: string, alias: string, description: string, why?: string): void {
    this.tables.add(table);
    const column = this.#layout.distributed[table]!;
    this.problems.push(`${table}${alias !== table ? ` ${alias}` : ''} in ${description}: ${why ?? `no ${alias}.${column} = <one value>`}`);
  }

  /** Every query nested in an expression (SubLink: EXISTS, IN, ANY, scalar subqueries) is a level of its own. */
  subqueriesIn(expression: unknown, ctes: ReadonlySet<string>, description: string): void {
    walk(expression, (node) => {
      if (node.SubLink) {
        this.query(node.SubLink.subselect, ctes, `subquery in ${description}`);
        return false;
      }
      return true;
    });
  }
}

/** Calls `visit` on every object in a parse tree; `visit` returning false skips that object's children. */
function walk(value: unknown, visit: (node: Node) => boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
  } else if (value && typeof value === 'object') {
    if (!visit(value as Node)) return;
    for (const child of Object.values(value)) walk(child, visit);
  }
}

function stripCasts(expression: Node | undefined): Node | undefined {
  let bare = expression;
  while (bare?.TypeCast) bare = bare.TypeCast.arg;
  return bare;
}

/** The conjuncts of a condition (its AND terms). */
function andOf(condition: Node | undefined): Node[] {
  if (!condition) return [];
  if (condition.BoolExpr?.boolop === 'AND_EXPR') return condition.BoolExpr.args.flatMap((arg: Node) => andOf(arg));
  return [condition];
}

/** `alias.column` for a column of this level; null for one of an outer level, or an unqualified one that is ambiguous. */
function columnKey(ref: Node, level: Level): string | null {
  const names: string[] = ref.fields.map((field: Node) => field.String?.sval).filter((name: string | undefined) => name !== undefined);
  if (names.length === 0) return null;
  const column = names[names.length - 1]!;
  if (names.length >= 2) {
    const alias = names[names.length - 2]!;
    return level.items.some((item) => item.alias === alias) ? `${alias}.${column}` : null;
  }
  const tables = level.items.filter((item) => item.table);
  return level.items.length === 1 || tables.length === 1 ? `${(tables[0] ?? level.items[0])!.alias}.${column}` : null;
}

/** Routes every statement in `sql` (several when it is a simple query with semicolons); one verdict for all of them. */
export function routeStatement(sql: string, params: readonly ParamValue[], layout: ShardLayout): RoutingVerdict {
  const router = new StatementRouter(layout, params);
  for (const raw of parseSync(sql).stmts ?? []) router.statement(raw.stmt as Node);
  const tables = [...router.tables].sort();
  if (tables.length === 0) return { tables, kind: 'none', problems: [] };
  const problems = [...router.problems];
  if (router.values.size > 1) problems.push(`pinned to several values: ${[...router.values].join(', ')}`);
  if (problems.length > 0) return { tables, kind: 'multi', problems };
  return { tables, kind: 'single', value: [...router.values][0]!, problems };
}
