/**
 * Elements the code knows are there (the first row of an aggregate, the last of a non-empty
 * list): a missing one is a bug, raised as an error that answers as an internal error.
 */
export function elementAt<T>(list: ArrayLike<T>, index: number): T {
  const element = list[index];
  if (element === undefined) throw new Error(`no element ${index} in a list of ${list.length}`);
  return element;
}

export function lastOf<T>(list: ArrayLike<T>): T {
  return elementAt(list, list.length - 1);
}
