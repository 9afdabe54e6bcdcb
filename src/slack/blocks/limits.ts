/** Slack's size limits for messages, views, blocks and their text. */
export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  messageText: 40_000,
  sectionText: 3000,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  contextElements: 10,
  fields: 10,
  fieldText: 2000,
  modalTitle: 24,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
} as const;
