import { type NodeAction, type Role, actionsFor } from '@ccos/shared/domain';

/** The buttons a node's page offers: the API's `availableActions`, of those the user's role may ask for. */
export interface NodeActions {
  readonly install: boolean;
  readonly retry: boolean;
  readonly cancel: boolean;
  readonly recopy: boolean;
  readonly credentials: boolean;
  readonly acceptHostKey: boolean;
  readonly clean: boolean;
  readonly delete: boolean;
  readonly remove: boolean;
  readonly cancelRemoval: boolean;
  readonly uncordon: boolean;
}

const BUTTON: Readonly<Record<NodeAction, keyof NodeActions>> = {
  INSTALL: 'install',
  RETRY_INSTALL: 'retry',
  CANCEL_INSTALL: 'cancel',
  RECOPY_AGENT: 'recopy',
  UPDATE_CREDENTIALS: 'credentials',
  ACCEPT_HOST_KEY: 'acceptHostKey',
  CLEAN_HOST: 'clean',
  DELETE_RECORD: 'delete',
  REMOVE: 'remove',
  CANCEL_REMOVAL: 'cancelRemoval',
  UNCORDON: 'uncordon',
};

export const NO_ACTIONS: NodeActions = {
  install: false,
  retry: false,
  cancel: false,
  recopy: false,
  credentials: false,
  acceptHostKey: false,
  clean: false,
  delete: false,
  remove: false,
  cancelRemoval: false,
  uncordon: false,
};

/**
 * The buttons for a node whose actions the API listed (the node lifecycle in @ccos/shared/domain
 * decides them there), kept to those `role` may ask for. A removal can only be cancelled while it
 * drains, which the removal run says: `removalCancellable`.
 */
export function nodeButtons(available: readonly NodeAction[], role: Role | null, removalCancellable = false): NodeActions {
  const buttons: Record<keyof NodeActions, boolean> = { ...NO_ACTIONS };
  for (const action of actionsFor(available, role)) {
    buttons[BUTTON[action]] = action !== 'CANCEL_REMOVAL' || removalCancellable;
  }
  return buttons;
}

export function hasAnyAction(actions: NodeActions): boolean {
  return Object.values(actions).some(Boolean);
}
