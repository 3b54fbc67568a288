CREATE TABLE `sweeps` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`source` text NOT NULL,
	`status` text NOT NULL,
	`paid_with_credits` integer DEFAULT true NOT NULL,
	`base` text NOT NULL,
	`grid` text NOT NULL,
	`combinations` text NOT NULL,
	`seeds` integer NOT NULL,
	`seed_base` integer NOT NULL,
	`seed_given` integer NOT NULL,
	`children` integer NOT NULL,
	`waiting_on` text,
	`cancel_requested_at` text,
	`end_token` text,
	`ended_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sweeps_account_created_idx` ON `sweeps` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `sweeps_status_idx` ON `sweeps` (`status`);--> statement-breakpoint
ALTER TABLE `runs` ADD `awaiting_slot` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `runs_awaiting_slot_idx` ON `runs` (`awaiting_slot`,`status`,`account_id`);--> statement-breakpoint
ALTER TABLE `submissions` ADD `sweep_id` text;--> statement-breakpoint
ALTER TABLE `submissions` ADD `sweep_index` integer;--> statement-breakpoint
CREATE INDEX `submissions_sweep_idx` ON `submissions` (`sweep_id`,`sweep_index`);
--> statement-breakpoint
-- Hand-written below (drizzle-kit does not model triggers): a sweep's child awaiting a slot is queued but
-- not admitted, so it is not on the platform queue. The count of 0001 becomes the runs that are queued
-- and not awaiting a slot; the cap is checked when such a run is inserted and when a child is admitted
-- (awaiting_slot 1 → 0), which refuses the admission like an insert past the cap.
DROP TRIGGER `runs_platform_cap`;
--> statement-breakpoint
DROP TRIGGER `runs_queued_insert`;
--> statement-breakpoint
DROP TRIGGER `runs_queued_update`;
--> statement-breakpoint
DROP TRIGGER `runs_queued_delete`;
--> statement-breakpoint
CREATE TRIGGER `runs_platform_cap` BEFORE INSERT ON `runs` WHEN NEW.`status` = 'queued' AND NEW.`awaiting_slot` = 0 AND (SELECT `queued` >= `cap` FROM `platform_queue` WHERE `id` = 1) BEGIN SELECT RAISE(ABORT, 'platform_at_capacity'); END;
--> statement-breakpoint
CREATE TRIGGER `runs_platform_cap_admit` BEFORE UPDATE OF `awaiting_slot` ON `runs` WHEN OLD.`awaiting_slot` = 1 AND NEW.`awaiting_slot` = 0 AND NEW.`status` = 'queued' AND (SELECT `queued` >= `cap` FROM `platform_queue` WHERE `id` = 1) BEGIN SELECT RAISE(ABORT, 'platform_at_capacity'); END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_insert` AFTER INSERT ON `runs` WHEN NEW.`status` = 'queued' AND NEW.`awaiting_slot` = 0 BEGIN UPDATE `platform_queue` SET `queued` = `queued` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_update` AFTER UPDATE OF `status`, `awaiting_slot` ON `runs` WHEN (OLD.`status` = 'queued' AND OLD.`awaiting_slot` = 0) <> (NEW.`status` = 'queued' AND NEW.`awaiting_slot` = 0) BEGIN UPDATE `platform_queue` SET `queued` = `queued` + (CASE WHEN NEW.`status` = 'queued' AND NEW.`awaiting_slot` = 0 THEN 1 ELSE -1 END) WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_delete` AFTER DELETE ON `runs` WHEN OLD.`status` = 'queued' AND OLD.`awaiting_slot` = 0 BEGIN UPDATE `platform_queue` SET `queued` = `queued` - 1 WHERE `id` = 1; END;
