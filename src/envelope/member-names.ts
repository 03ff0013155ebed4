/**
 * The member names of one JSON object, as the duplicate-member scans
 * (strict-json.ts, duplicate-members.ts) collect them: adding a name says
 * whether the object already had it.
 *
 * Up to LISTED_NAMES names they are searched as a list: objects in A2A bodies
 * have a handful of members, and a list costs less to make and to search than
 * a Set, which most objects would build only to throw away (the scan of a
 * caller's request took 2.3x as long with a Set per object). Past it, a Set as
 * well, so an object with very many members costs one lookup per member.
 */
export const LISTED_NAMES = 16;

export class MemberNames {
  readonly #list: string[] = [];
  #set: Set<string> | undefined;

  /** Adds `name`; false when the object already has it. */
  add(name: string): boolean {
    if (this.#set !== undefined) {
      if (this.#set.has(name)) return false;
      this.#set.add(name);
      return true;
    }
    const list = this.#list;
    for (let i = 0; i < list.length; i++) if (list[i] === name) return false;
    list.push(name);
    if (list.length > LISTED_NAMES) this.#set = new Set(list);
    return true;
  }
}
