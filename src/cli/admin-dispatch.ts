interface AdminCliModule {
  runAdminCli(argv: string[]): Promise<number | void> | number | void;
}

/**
 * `game-platform admin ...`: the admin commands live in ./admin.ts, loaded only when asked
 * for, so the rest of the program starts without them.
 */
export async function runAdmin(argv: string[]): Promise<number> {
  const specifier = './admin.js';
  let module: AdminCliModule;
  try {
    module = (await import(specifier)) as AdminCliModule;
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' && /[\\/]cli[\\/]admin\.(js|ts)/.test(e.message ?? '')) {
      console.error('game-platform admin: the admin commands are not part of this build');
      return 1;
    }
    throw error;
  }
  const code = await module.runAdminCli(argv);
  return typeof code === 'number' ? code : 0;
}
