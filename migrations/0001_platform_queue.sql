CREATE TABLE `platform_queue` (
	`id` integer PRIMARY KEY NOT NULL,
	`queued` integer NOT NULL,
	`cap` integer NOT NULL
);
--> statement-breakpoint
-- Hand-written below (drizzle-kit does not model triggers): the one row, and the triggers that keep
-- `queued` equal to the number of runs whose status is 'queued', in the same transaction as the change.
INSERT INTO `platform_queue` (`id`, `queued`, `cap`) SELECT 1, count(*), 1000 FROM `runs` WHERE `status` = 'queued';
--> statement-breakpoint
CREATE TRIGGER `runs_platform_cap` BEFORE INSERT ON `runs` WHEN NEW.`status` = 'queued' AND (SELECT `queued` >= `cap` FROM `platform_queue` WHERE `id` = 1) BEGIN SELECT RAISE(ABORT, 'platform_at_capacity'); END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_insert` AFTER INSERT ON `runs` WHEN NEW.`status` = 'queued' BEGIN UPDATE `platform_queue` SET `queued` = `queued` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_update` AFTER UPDATE OF `status` ON `runs` WHEN (OLD.`status` = 'queued') <> (NEW.`status` = 'queued') BEGIN UPDATE `platform_queue` SET `queued` = `queued` + (CASE WHEN NEW.`status` = 'queued' THEN 1 ELSE -1 END) WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `runs_queued_delete` AFTER DELETE ON `runs` WHEN OLD.`status` = 'queued' BEGIN UPDATE `platform_queue` SET `queued` = `queued` - 1 WHERE `id` = 1; END;
