import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  authorize,
  can,
  canGrant,
  CAPABILITIES,
  outranks,
  ROLES,
  ROLES_MATRIX,
  topRank,
  type Access,
  type Capability,
  type Role,
} from '../../core/identity/roles.ts';
import { DomainError } from '../../core/shared/errors.ts';

/*
 * Spec v3-api.md, section 2.14 "Roles matrix", copied verbatim:
 *
 * | Capability | Owner | Admin | Manager | Agent |
 * |---|---|---|---|---|
 * | Read the workspace | yes | yes | yes | yes |
 * | Update the workspace | yes | no | no | no |
 * | Delete or transfer the workspace | yes | no | no | no |
 * | Members | yes | yes | yes | read |
 * | Connections, integrations, webhooks | yes | yes | yes | no |
 * | Send messages and campaigns | yes | yes | yes | no |
 * | Read messages on a connection | yes | yes | no | no |
 * | API tokens and OAuth apps | yes | yes | no | no |
 * | Billing | yes | no | no | no |
 * | Helpdesk: configure | yes | yes | yes | no |
 * | Helpdesk: reply, assign, label | yes | yes | yes | yes |
 * | Helpdesk: reports | yes | yes | yes | no |
 * | Helpdesk: AI configuration | yes | yes | read | read |
 *
 * Rules: a member can never grant a role at or above their own.
 */
const SPEC_COLUMNS = ['Owner', 'Admin', 'Manager', 'Agent'] as const;
const SPEC_TABLE = `
| Read the workspace | yes | yes | yes | yes |
| Update the workspace | yes | no | no | no |
| Delete or transfer the workspace | yes | no | no | no |
| Members | yes | yes | yes | read |
| Connections, integrations, webhooks | yes | yes | yes | no |
| Send messages and campaigns | yes | yes | yes | no |
| Read messages on a connection | yes | yes | no | no |
| API tokens and OAuth apps | yes | yes | no | no |
| Billing | yes | no | no | no |
| Helpdesk: configure | yes | yes | yes | no |
| Helpdesk: reply, assign, label | yes | yes | yes | yes |
| Helpdesk: reports | yes | yes | yes | no |
| Helpdesk: AI configuration | yes | yes | read | read |
`;

/** Which spec row each capability of the code stands for. */
const SPEC_ROW_OF: Record<Capability, string> = {
  'workspace.read': 'Read the workspace',
  'workspace.update': 'Update the workspace',
  'workspace.delete': 'Delete or transfer the workspace',
  members: 'Members',
  connections: 'Connections, integrations, webhooks',
  'messages.send': 'Send messages and campaigns',
  'messages.read': 'Read messages on a connection',
  tokens: 'API tokens and OAuth apps',
  billing: 'Billing',
  'helpdesk.configure': 'Helpdesk: configure',
  'helpdesk.work': 'Helpdesk: reply, assign, label',
  'helpdesk.reports': 'Helpdesk: reports',
  'helpdesk.ai': 'Helpdesk: AI configuration',
};

const ROLE_OF_COLUMN: Record<(typeof SPEC_COLUMNS)[number], Role> = { Owner: 'OWNER', Admin: 'ADMIN', Manager: 'MANAGER', Agent: 'AGENT' };

type Cell = 'yes' | 'no' | 'read';

/** The spec table parsed: spec row label -> role -> cell. */
const EXPECTED: Map<string, Record<Role, Cell>> = new Map(
  SPEC_TABLE.trim()
    .split('\n')
    .map((line) => {
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      const [label, ...grants] = cells;
      if (!label || grants.length !== 4) throw new Error(`bad spec line: ${line}`);
      const row = {} as Record<Role, Cell>;
      SPEC_COLUMNS.forEach((column, i) => {
        const grant = grants[i];
        if (grant !== 'yes' && grant !== 'no' && grant !== 'read') throw new Error(`bad cell ${grant}`);
        row[ROLE_OF_COLUMN[column]] = grant;
      });
      return [label, row] as const;
    }),
);

/** Roles from most to least powerful, as the spec's columns list them. */
const HIERARCHY: readonly Role[] = ['OWNER', 'ADMIN', 'MANAGER', 'AGENT'];
const level = (role: Role) => HIERARCHY.length - HIERARCHY.indexOf(role);

/** The expected answer of `can`, straight from the spec table. */
function specAllows(roles: readonly Role[], capability: Capability, access: Access): boolean {
  const row = EXPECTED.get(SPEC_ROW_OF[capability])!;
  return roles.some((role) => row[role] === 'yes' || (row[role] === 'read' && access === 'read'));
}

const role = fc.constantFrom<Role>(...HIERARCHY);
const roles = fc.uniqueArray(role, { minLength: 1, maxLength: 4 });
const anyRoles = fc.uniqueArray(role, { minLength: 0, maxLength: 4 });
const capability = fc.constantFrom<Capability>(...CAPABILITIES);
const access = fc.constantFrom<Access>('read', 'write');

describe('roles matrix (spec 2.14)', () => {
  test('the code knows exactly the roles and capabilities of the spec', () => {
    expect([...ROLES]).toEqual([...HIERARCHY]);
    expect(new Set(CAPABILITIES).size).toBe(CAPABILITIES.length);
    expect(Object.keys(ROLES_MATRIX).sort()).toEqual([...CAPABILITIES].sort());
    expect(CAPABILITIES.map((c) => SPEC_ROW_OF[c]).sort()).toEqual([...EXPECTED.keys()].sort());
    expect(EXPECTED.size).toBe(13);
  });

  test('every cell of ROLES_MATRIX equals the spec table', () => {
    let cells = 0;
    for (const capability of CAPABILITIES) {
      const expected = EXPECTED.get(SPEC_ROW_OF[capability])!;
      expect(Object.keys(ROLES_MATRIX[capability]).sort()).toEqual([...HIERARCHY].sort());
      for (const role of HIERARCHY) {
        expect({ capability, role, grant: ROLES_MATRIX[capability][role] }).toEqual({ capability, role, grant: expected[role] });
        cells += 1;
      }
    }
    expect(cells).toBe(13 * 4);
  });

  test('can() answers what the spec table says for any set of roles', () => {
    fc.assert(
      fc.property(anyRoles, capability, access, (held, cap, acc) => {
        expect(can(held, cap, acc)).toBe(specAllows(held, cap, acc));
      }),
      { numRuns: 500 },
    );
  });

  test('can() answers what the spec table says for every one of the 16 role sets (exhaustive)', () => {
    const subsets = Array.from({ length: 1 << HIERARCHY.length }, (_, mask) => HIERARCHY.filter((_, i) => mask & (1 << i)));
    let checked = 0;
    for (const held of subsets) {
      for (const cap of CAPABILITIES) {
        for (const acc of ['read', 'write'] as const) {
          expect({ held, cap, acc, allowed: can(held, cap, acc) }).toEqual({ held, cap, acc, allowed: specAllows(held, cap, acc) });
          checked += 1;
        }
      }
    }
    expect(checked).toBe(16 * 13 * 2);
  });

  test('with several roles, can() is the OR of each role alone', () => {
    fc.assert(
      fc.property(roles, capability, access, (held, cap, acc) => {
        expect(can(held, cap, acc)).toBe(held.some((r) => can([r], cap, acc)));
      }),
      { numRuns: 500 },
    );
  });

  test('order and repetition of roles do not matter, and no role means no access', () => {
    fc.assert(
      fc.property(fc.array(role, { maxLength: 8 }), capability, access, (held, cap, acc) => {
        const unique = [...new Set(held)];
        expect(can(held, cap, acc)).toBe(can(unique, cap, acc));
        expect(can([...held].reverse(), cap, acc)).toBe(can(held, cap, acc));
      }),
    );
    for (const cap of CAPABILITIES) {
      expect(can([], cap, 'read')).toBe(false);
      expect(can([], cap, 'write')).toBe(false);
    }
  });

  test("'read' is granted whenever 'write' is", () => {
    fc.assert(
      fc.property(anyRoles, capability, (held, cap) => {
        if (can(held, cap, 'write')) expect(can(held, cap, 'read')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('adding a role never takes access away', () => {
    fc.assert(
      fc.property(anyRoles, role, capability, access, (held, extra, cap, acc) => {
        if (can(held, cap, acc)) expect(can([...held, extra], cap, acc)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('authorize() throws 403 "Insufficient account permissions" exactly when can() is false', () => {
    fc.assert(
      fc.property(anyRoles, capability, access, (held, cap, acc) => {
        let thrown: unknown;
        try {
          authorize(held, cap, acc);
        } catch (error) {
          thrown = error;
        }
        if (can(held, cap, acc)) {
          expect(thrown).toBeUndefined();
        } else {
          expect(thrown).toBeInstanceOf(DomainError);
          const error = thrown as DomainError;
          expect(error.kind).toBe('forbidden');
          expect(error.message).toBe('Insufficient account permissions');
          expect(error.shape).toBe('standard');
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('rank and grants (spec 2.14 rules)', () => {
  test('topRank() orders role sets by their most powerful role', () => {
    expect(topRank([])).toBe(0);
    fc.assert(
      fc.property(roles, roles, (a, b) => {
        const highestA = Math.max(...a.map(level));
        const highestB = Math.max(...b.map(level));
        expect(Math.sign(topRank(a) - topRank(b))).toBe(Math.sign(highestA - highestB));
        expect(topRank(a)).toBeGreaterThan(0);
        expect(topRank(a)).toBe(topRank([...a, ...a.filter((r) => level(r) < highestA)]));
      }),
      { numRuns: 300 },
    );
  });

  test('canGrant() is true iff the role is strictly below the granter’s highest role', () => {
    fc.assert(
      fc.property(anyRoles, role, (granter, target) => {
        const highest = granter.length === 0 ? 0 : Math.max(...granter.map(level));
        expect(canGrant(granter, target)).toBe(level(target) < highest);
        // Nobody grants a role at or above their own (their highest).
        if (granter.some((r) => level(r) <= level(target)) && !granter.some((r) => level(r) > level(target))) {
          expect(canGrant(granter, target)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('the grant rule by name: Agent grants nothing, Owner grants all but Owner', () => {
    for (const target of HIERARCHY) {
      expect(canGrant(['AGENT'], target)).toBe(false);
      expect(canGrant([], target)).toBe(false);
    }
    expect(canGrant(['OWNER'], 'OWNER')).toBe(false);
    expect(canGrant(['OWNER'], 'ADMIN')).toBe(true);
    expect(canGrant(['OWNER'], 'MANAGER')).toBe(true);
    expect(canGrant(['OWNER'], 'AGENT')).toBe(true);
    expect(canGrant(['ADMIN'], 'ADMIN')).toBe(false);
    expect(canGrant(['ADMIN'], 'OWNER')).toBe(false);
    expect(canGrant(['ADMIN'], 'MANAGER')).toBe(true);
    expect(canGrant(['MANAGER'], 'AGENT')).toBe(true);
    expect(canGrant(['MANAGER'], 'MANAGER')).toBe(false);
    expect(canGrant(['AGENT', 'MANAGER'], 'AGENT')).toBe(true);
  });

  test('outranks() is "highest role strictly higher": irreflexive, asymmetric, transitive', () => {
    fc.assert(
      fc.property(anyRoles, anyRoles, anyRoles, (a, b, c) => {
        const highest = (rs: Role[]) => (rs.length === 0 ? 0 : Math.max(...rs.map(level)));
        expect(outranks(a, b)).toBe(highest(a) > highest(b));
        expect(outranks(a, a)).toBe(false);
        if (outranks(a, b)) expect(outranks(b, a)).toBe(false);
        if (outranks(a, b) && outranks(b, c)) expect(outranks(a, c)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('whoever may grant a role outranks a member holding only that role', () => {
    fc.assert(
      fc.property(anyRoles, role, (granter, target) => {
        expect(canGrant(granter, target)).toBe(outranks(granter, [target]));
      }),
      { numRuns: 300 },
    );
  });
});
