import { Type } from '@sinclair/typebox';
import { ItemProto, ItemProtoLegacy, Num, Str, flag, obj, opt, type SdkRules } from './shapes.js';

const Collection = obj({ collection_id: Num, title: Str });
const PROTOS = {
  plain: obj({ item_protos: Type.Array(ItemProto), collections: Type.Array(Collection) }),
  legacy: obj({ item_protos: Type.Array(ItemProtoLegacy), collections: Type.Array(Collection) }),
  plainAlone: obj({ item_protos: Type.Array(ItemProto) }),
  legacyAlone: obj({ item_protos: Type.Array(ItemProtoLegacy) }),
};

const SEARCH = obj({ item_protos: Type.Array(ItemProto), collections: Type.Array(obj({ collection_id: Num, id: opt(Num), title: Str })) });

export const dataRules: SdkRules = {
  // Collections come with the prototypes unless add_metadata=0.
  'data.getItemProtos': (params) => {
    const legacy = flag(params, 'add_legacy', 0);
    if (flag(params, 'add_metadata', 1)) return legacy ? PROTOS.legacy : PROTOS.plain;
    return legacy ? PROTOS.legacyAlone : PROTOS.plainAlone;
  },
  'data.searchItemProtos': (params) => (flag(params, 'add_metadata', 1) ? SEARCH : PROTOS.plainAlone),
};
